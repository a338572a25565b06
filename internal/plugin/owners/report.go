/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package owners

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin"
	"github.com/llmkube/operator/internal/plugin/cluster"
)

// Report is the ownership of what the operator applies for one InferenceService or ModelRouter.
type Report struct {
	Object    string `json:"object"`
	Namespace string `json:"namespace"`
	// Deployment is the generated Deployment's name; empty when it does not exist (Notes say why).
	Deployment   string `json:"deployment"`
	FieldManager string `json:"fieldManager"`
	LegacyTraces bool   `json:"legacyTraces"`
	// Notes are what the user must know beside the rows: a missing Model, a router's missing
	// backends, a Deployment that does not exist yet.
	Notes []string `json:"notes,omitempty"`
	Rows  []Row    `json:"rows"`

	// names are the objects the rows are of, as -o name prints them.
	names []string
}

// For is the report of objs: its pod-template keys, and with allFields every field of every
// object the operator applies for it.
func For(ctx context.Context, c *cluster.Client, objs *cluster.Objects, op cluster.Operator, allFields bool) (*Report, error) {
	set, err := c.Plan(ctx, objs, op)
	if err != nil {
		return nil, err
	}
	r := &Report{Object: objs.Short(), Namespace: objs.Namespace(), FieldManager: op.FieldManager, Notes: set.Notes(), Rows: []Row{}}
	switch {
	case objs.Deployment == nil && set.Blocked != "":
		return r, nil // the Notes say why the operator creates no Deployment
	case objs.Deployment == nil:
		r.Notes = append(r.Notes, fmt.Sprintf("no Deployment %s/%s yet: is the operator running? (kubectl get deploy -n %s; kubectl llmkube diff %s shows what it would create)",
			objs.Namespace(), objs.DeploymentName(), objs.Namespace(), objs.Short()))
		return r, nil
	}
	r.Deployment = objs.Deployment.Name
	r.names = []string{plugin.ObjectName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, r.Deployment)}
	legacy := op.Legacy(false)
	r.LegacyTraces = legacy.NeedsMigration(objs.Deployment, op.FieldManager)
	if set.Apply == nil {
		// The operator leaves the Deployment as it is (its Model is missing, the Notes say): who
		// owns each key still holds, and nothing is wanted.
		r.Rows, err = PodMetadata{Live: objs.Deployment, FieldManager: op.FieldManager, Legacy: legacy}.Rows()
		return r, err
	}
	want, err := set.Apply(objs.Deployment)
	if err != nil {
		return nil, err
	}
	if r.Rows, err = (PodMetadata{
		Live: objs.Deployment, Desired: want, SpecLabels: set.SpecLabels, SpecAnnotations: set.SpecAnnotations,
		FieldManager: op.FieldManager, Legacy: legacy,
	}).Rows(); err != nil {
		return nil, err
	}
	if !allFields {
		return r, nil
	}
	tc := ownership.NewTypeConverter(cluster.Scheme())
	more, err := Fields(tc, "Deployment", objs.Deployment, want, op.FieldManager)
	if err != nil {
		return nil, err
	}
	r.Rows = append(r.Rows, more...)
	for _, ac := range set.Others() {
		live, kind, err := c.LiveOf(ctx, ac)
		if err != nil {
			return nil, err
		}
		more, err := Fields(tc, kind, live, ac, op.FieldManager)
		if err != nil {
			return nil, err
		}
		r.Rows = append(r.Rows, more...)
		if live != nil {
			r.names = append(r.names, nameOf(live))
		}
	}
	return r, nil
}

// Reports are the reports of objs. named says the user named them one by one: an object without
// a Deployment is then an error, as kubectl get of a missing object is; found by -A it is a note.
func Reports(ctx context.Context, c *cluster.Client, objs []*cluster.Objects, op cluster.Operator, allFields, named bool) ([]*Report, error) {
	out := make([]*Report, 0, len(objs))
	for _, o := range objs {
		r, err := For(ctx, c, o, op, allFields)
		if err != nil {
			return nil, err
		}
		if named && r.Deployment == "" {
			return nil, fmt.Errorf("%s: %s", r.Object, strings.Join(r.Notes, "; "))
		}
		out = append(out, r)
	}
	return out, nil
}

// TypedNames are the objects the rows are of, in kubectl's -o name form.
func (r *Report) TypedNames() []string { return r.names }

// nameOf is obj as -o name prints it.
func nameOf(obj runtime.Object) string {
	name := ""
	if m, ok := obj.(interface{ GetName() string }); ok {
		name = m.GetName()
	}
	return plugin.ObjectName(obj.GetObjectKind().GroupVersionKind().GroupKind(), name)
}

// Print writes reports in format: one report's table, or one table of every report with its
// namespace and object (many, as with -A); -o json and yaml as the report, or a list of them
// (many); -o name the objects the rows are of.
func Print(w io.Writer, format string, reports []*Report, many bool) error {
	return plugin.Print(w, format, reports, many, func() error { return table(w, reports, many) })
}

func table(w io.Writer, reports []*Report, many bool) error {
	if !many && len(reports) == 1 {
		r := reports[0]
		fmt.Fprintf(w, "%s  Deployment %s/%s  field manager %s\n", r.Object, r.Namespace, r.Deployment, r.FieldManager)
		if r.LegacyTraces {
			fmt.Fprintf(w, "legacy traces of the records-based operator are present: kubectl llmkube migration plan -n %s\n", r.Namespace)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "# %s\n", n)
		}
		fmt.Fprintln(w)
		return plugin.Columns(w, columns, cells(r.Rows, nil))
	}
	var rows [][]string
	for _, r := range reports {
		for _, n := range r.Notes {
			fmt.Fprintf(w, "# %s/%s: %s\n", r.Namespace, r.Object, n)
		}
		if r.LegacyTraces {
			fmt.Fprintf(w, "# %s/%s: legacy traces of the records-based operator are present: kubectl llmkube migration plan -n %s\n", r.Namespace, r.Object, r.Namespace)
		}
		rows = append(rows, cells(r.Rows, []string{r.Namespace, r.Object})...)
	}
	return plugin.Columns(w, append([]string{"NAMESPACE", "OBJECT"}, columns...), rows)
}

var columns = []string{"PART", "KEY", "VALUE", "SOURCE", "OWNERS", "FLAGS"}

// cells are the table cells of rows, each after the cells of prefix.
func cells(rows []Row, prefix []string) [][]string {
	out := make([][]string, 0, len(rows))
	for _, row := range rows {
		value := row.Value
		if row.Want != nil && *row.Want != row.Value && row.Value != "<absent>" {
			value += " (wants " + *row.Want + ")"
		}
		flags := strings.Join(row.Flags, ",")
		if row.Note != "" {
			flags += ": " + row.Note
		}
		out = append(out, append(append([]string(nil), prefix...), row.Part, row.Key, value, row.Source, Join(row.Owners), flags))
	}
	return out
}
