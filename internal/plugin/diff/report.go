/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package diff

import (
	"context"
	"fmt"
	"io"

	"github.com/llmkube/operator/internal/plugin"
	"github.com/llmkube/operator/internal/plugin/cluster"
)

// Report is the diff of one InferenceService or ModelRouter (its -o json and yaml form).
type Report struct {
	Object    string `json:"object"`
	Namespace string `json:"namespace"`
	// Blocked says why the operator applies no workload (its Model is missing); empty otherwise.
	Blocked string `json:"blocked,omitempty"`
	// Unresolved are a ModelRouter's backends it routes nothing to, each with why.
	Unresolved []string `json:"unresolved,omitempty"`
	// LegacyTraces says the Deployment carries traces of the records-based operator: the
	// operator migrates it before this apply.
	LegacyTraces bool     `json:"legacyTraces,omitempty"`
	Objects      []Object `json:"objects"`

	notes []string
}

// Reports diffs the plan of each of objs: what the operator's next reconcile would write.
func Reports(ctx context.Context, c *cluster.Client, objs []*cluster.Objects, op cluster.Operator) ([]*Report, error) {
	out := make([]*Report, 0, len(objs))
	for _, t := range objs {
		set, err := c.Plan(ctx, t, op)
		if err != nil {
			return nil, err
		}
		dep := set.Deployment
		if set.Apply != nil {
			if dep, err = set.Apply(t.Deployment); err != nil {
				return nil, err
			}
		}
		changes, err := Compute(ctx, c, op.FieldManager, set.InOrder(dep), set.Delete, t.Object())
		if err != nil {
			return nil, err
		}
		out = append(out, &Report{
			Object: t.Short(), Namespace: t.Namespace(), Blocked: set.BlockedMessage, Unresolved: set.Unresolved,
			LegacyTraces: t.Deployment != nil && op.Legacy(false).NeedsMigration(t.Deployment, op.FieldManager),
			Objects:      changes, notes: set.Notes(),
		})
	}
	return out, nil
}

// TypedNames are the objects that would change, in kubectl's -o name form.
func (r *Report) TypedNames() []string {
	var out []string
	for _, o := range r.Objects {
		if o.Action != ActionUnchanged {
			out = append(out, o.TypedName())
		}
	}
	return out
}

// Changes says whether any report has an object that would change.
func Changes(reports []*Report) bool {
	for _, r := range reports {
		for _, o := range r.Objects {
			if o.Action != ActionUnchanged {
				return true
			}
		}
	}
	return false
}

// Print writes reports in format: unified diffs under comment lines, one report or a list of
// them (many: -f or -A) as -o json and yaml, or -o name the objects that would change.
func Print(w io.Writer, format string, reports []*Report, many bool) error {
	return plugin.Print(w, format, reports, many, func() error { return table(w, reports) })
}

func table(w io.Writer, reports []*Report) error {
	for _, r := range reports {
		for _, n := range r.notes {
			fmt.Fprintf(w, "# %s: %s\n", r.Object, n)
		}
		if r.LegacyTraces {
			fmt.Fprintf(w, "# %s: its Deployment carries traces of the records-based operator: the operator migrates it before this apply; see kubectl llmkube migration plan -n %s\n", r.Object, r.Namespace)
		}
		for _, ch := range r.Objects {
			if ch.Action == ActionUnchanged {
				fmt.Fprintf(w, "# %s %s/%s: unchanged\n", ch.Kind, ch.Namespace, ch.Name)
				continue
			}
			fmt.Fprintf(w, "# %s %s/%s: %s\n%s", ch.Kind, ch.Namespace, ch.Name, ch.Action, ch.Diff)
		}
	}
	return nil
}
