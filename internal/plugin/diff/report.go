/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package diff

import (
	"context"
	"errors"
	"fmt"
	"io"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/llmkube/operator/controllers/ownership"
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
		owner := t.Object()
		// Before first: whether the reconciler applies the Deployment depends on its refusals.
		changes, err := Compute(ctx, c, op.FieldManager, set.Before, nil, owner)
		if err != nil {
			return nil, err
		}
		notes := set.Notes()
		var dep *appsv1ac.DeploymentApplyConfiguration
		switch {
		case set.Refused != nil:
			// The plan's own refusal of the Deployment: said on its row, not twice.
			changes = append(changes, refusedDeployment(set.Refused))
			notes = notesWithout(notes, set.BlockedMessage)
		case set.Apply != nil && set.AppliesDeployment != nil && !set.AppliesDeployment(Refused(changes)):
			notes = append(notes, "no Deployment is applied while an object applied before it is refused (its pods would mount someone else's volume)")
		case set.Apply != nil:
			if dep, err = set.Apply(t.Deployment); err != nil {
				return nil, err
			}
		}
		rest, err := Compute(ctx, c, op.FieldManager, set.FromDeployment(dep), set.Delete, owner)
		if err != nil {
			return nil, err
		}
		out = append(out, &Report{
			Object: t.Short(), Namespace: t.Namespace(), Blocked: set.BlockedMessage, Unresolved: set.Unresolved,
			LegacyTraces: t.Deployment != nil && op.Legacy(false).NeedsMigration(t.Deployment, op.FieldManager),
			Objects:      append(changes, rest...), notes: notes,
		})
	}
	return out, nil
}

// refusedDeployment is the row of a Deployment the plan refuses (err names it, see
// ownership.Failure).
func refusedDeployment(err error) Object {
	o := Object{Kind: "Deployment", Action: ActionRefused, Refused: err.Error(), group: "apps"}
	var f *ownership.Failure
	if errors.As(err, &f) {
		o.Namespace, o.Name = f.Key.Namespace, f.Key.Name
	}
	return o
}

func notesWithout(notes []string, drop string) []string {
	var out []string
	for _, n := range notes {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

// TypedNames are the objects that would change, in kubectl's -o name form: not a refused one,
// which the operator leaves as it is.
func (r *Report) TypedNames() []string {
	var out []string
	for _, o := range r.Objects {
		if o.Action != ActionUnchanged && o.Action != ActionRefused {
			out = append(out, o.TypedName())
		}
	}
	return out
}

// Changes says whether any report has an object that would change, or that the operator refuses
// to write (kubectl llmkube diff then exits 1: see docs/plugin.md, P10).
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
			if ch.Action == ActionRefused {
				fmt.Fprintf(w, "# %s %s/%s: refused, the operator does nothing to it: %s\n", ch.Kind, ch.Namespace, ch.Name, ch.Refused)
				continue
			}
			fmt.Fprintf(w, "# %s %s/%s: %s\n%s", ch.Kind, ch.Namespace, ch.Name, ch.Action, ch.Diff)
		}
	}
	return nil
}
