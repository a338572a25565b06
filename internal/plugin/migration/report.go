/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package migration

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/llmkube/operator/internal/plugin"
	"github.com/llmkube/operator/internal/plugin/cluster"
	"github.com/llmkube/operator/internal/plugin/owners"
)

// Report is the preview of the migration of every object of a namespace (or of all of them):
// the -o json and yaml form of `migration plan`.
type Report struct {
	FieldManager         string   `json:"fieldManager"`
	LegacyFieldManagers  []string `json:"legacyFieldManagers"`
	AdoptLegacyOwnership bool     `json:"adoptLegacyOwnership"`
	// Blocked are the InferenceServices whose objects the operator does not touch, so does not
	// migrate, until what they name exists: "isvc/NAME: why".
	Blocked []string `json:"blocked,omitempty"`
	Plans   []*Plan  `json:"plans"`
	Prunes  bool     `json:"prunes"`
	// Namespace is where the objects were read; "" for every namespace.
	Namespace string `json:"-"`
}

// All previews the migration of every object the operator applies for the InferenceServices and
// ModelRouters of ns (every namespace when empty), in namespace and name order.
func All(ctx context.Context, c *cluster.Client, ns string, op cluster.Operator, adopt bool) (*Report, error) {
	r := &Report{FieldManager: op.FieldManager, LegacyFieldManagers: op.LegacyFieldManagers, AdoptLegacyOwnership: adopt,
		Plans: []*Plan{}, Namespace: ns}
	if r.LegacyFieldManagers == nil {
		r.LegacyFieldManagers = []string{}
	}
	objs, err := c.ReadAll(ctx, ns)
	if err != nil {
		return nil, err
	}
	opts := Options{FieldManager: op.FieldManager, Legacy: op.Legacy(adopt)}
	for _, o := range objs {
		set, err := c.Plan(ctx, o, op)
		if err != nil {
			return nil, err
		}
		if set.Blocked != "" {
			r.Blocked = append(r.Blocked, o.Namespace()+"/"+o.Short()+": "+set.BlockedMessage)
		}
		cands, err := Candidates(ctx, c, set, o.Deployment)
		if err != nil {
			return nil, err
		}
		for _, cand := range cands {
			p, err := For(cand, opts)
			if err != nil {
				return nil, fmt.Errorf("planning the migration of %s (%s %s/%s): %w", cand.Owner, cand.Live.GetObjectKind().GroupVersionKind().Kind,
					cand.Live.GetNamespace(), cand.Live.GetName(), err)
			}
			if p != nil {
				r.Plans = append(r.Plans, p)
				r.Prunes = r.Prunes || p.Prunes()
			}
		}
	}
	return r, nil
}

// Print writes r in format: a table of every key with its action and the action with the
// opposite --adopt-legacy-ownership, then a summary line per object; or -o json and yaml.
func Print(w io.Writer, format string, r *Report) error {
	if format == plugin.JSON || format == plugin.YAML {
		return plugin.Data(w, format, r)
	}
	for _, b := range r.Blocked {
		fmt.Fprintf(w, "# %s: its objects are migrated once it exists\n", b)
	}
	if len(r.Plans) == 0 {
		where := "namespace " + r.Namespace
		if r.Namespace == "" {
			where = "any namespace"
		}
		fmt.Fprintf(w, "No object in %s carries ownership of the records-based operator (legacy field managers: %s): nothing to migrate.\n",
			where, strings.Join(r.LegacyFieldManagers, ","))
		return nil
	}
	alt := "WITH --adopt-legacy-ownership"
	if r.AdoptLegacyOwnership {
		alt = "WITHOUT --adopt-legacy-ownership"
	}
	var rows [][]string
	summaries := make([]string, 0, len(r.Plans))
	for _, p := range r.Plans {
		table, summary := p.lines()
		rows = append(rows, table...)
		summaries = append(summaries, summary)
	}
	if err := plugin.Columns(w, []string{"OBJECT", "PART", "KEY", "VALUE", "ACTION", "OWNERS AFTER", alt}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, s := range summaries {
		fmt.Fprintln(w, s)
	}
	return nil
}

// lines are p's table rows and its summary line. A field other than a pod-template key that the
// migration releases goes to the summary, not the table: mostly defaults the API server filled in.
func (p *Plan) lines() (rows [][]string, summary string) {
	altOf := map[string]string{}
	for _, k := range p.Alternative.Keys {
		altOf[k.Part+":"+k.Key] = k.Action
	}
	var released []string
	for _, k := range p.Outcome.Keys {
		if k.Part == PartField && k.Action == ActionRelease {
			released = append(released, k.Key)
			continue
		}
		rows = append(rows, []string{p.Namespace + "/" + p.Kind + "/" + p.Name, k.Part, k.Key, k.Value, k.Action, owners.Join(k.Owners), altOf[k.Part+":"+k.Key]})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s (%s %s): ", p.Namespace, p.Owner, p.Kind, p.Name)
	if p.Kind == "Deployment" {
		var podKeys []string
		for _, id := range p.Outcome.Unowned {
			if !strings.HasPrefix(id, PartField+":") {
				podKeys = append(podKeys, id)
			}
		}
		rolls := "no pod rolls"
		if p.Outcome.Rolls {
			rolls = "pods roll"
		}
		fmt.Fprintf(&b, "%s; unowned pod keys afterwards [%s]; ", rolls, strings.Join(podKeys, ", "))
	}
	fmt.Fprintf(&b, "prune [%s]; drops Update entries of [%s]; removes [%s]",
		strings.Join(p.Outcome.Pruned, ", "), strings.Join(p.LegacyManagersDropped, ", "), strings.Join(p.RecordsRemoved, ", "))
	if len(released) > 0 {
		more := ""
		if len(released) > 3 {
			more = fmt.Sprintf(", and %d more (-o json lists them)", len(released)-3)
			released = released[:3]
		}
		fmt.Fprintf(&b, "; releases other fields (unowned afterwards, never deleted) [%s%s]", strings.Join(released, ", "), more)
	}
	if len(p.InvalidRecordEntries) > 0 {
		fmt.Fprintf(&b, "; ignores record entries that are not keys [%s]", strings.Join(p.InvalidRecordEntries, ", "))
	}
	return rows, b.String()
}
