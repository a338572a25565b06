/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/llmkube/operator/internal/plugin/cluster"
	"github.com/llmkube/operator/internal/plugin/managed"
	"github.com/llmkube/operator/internal/plugin/migration"
	"github.com/llmkube/operator/internal/plugin/output"
)

// exitPrunes is the exit code of `migration plan --fail-on-prune` when something would be pruned.
const exitPrunes = 3

// planReport is the -o json/yaml form of `migration plan`.
type planReport struct {
	FieldManager         string            `json:"fieldManager"`
	LegacyFieldManagers  []string          `json:"legacyFieldManagers"`
	AdoptLegacyOwnership bool              `json:"adoptLegacyOwnership"`
	Plans                []*migration.Plan `json:"plans"`
	Prunes               bool              `json:"prunes"`
}

func newMigrationCmd(kube *genericclioptions.ConfigFlags, op *operatorFlags) *cobra.Command {
	group := &cobra.Command{Use: "migration", Short: "Preview the one-time migration from the records-based operator"}
	var (
		format             string
		allNamespaces      bool
		failOnPrune, adopt bool
	)
	plan := &cobra.Command{
		Use:   "plan [-n NAMESPACE | -A]",
		Short: "What the operator's migration will do to every object with legacy traces (read-only)",
		Long: `What the operator's migration will do to every object with traces of the records-based
operator, computed by the operator's own migration and desired-state code, and the API server's
field manager on the result. Nothing is written.

ACTION per pod-template key, after the migration write and the first apply:
  take over          the operator owns it from now on (from a record, or adopted)
  prune              the first apply deletes it: the pods roll
  keep               another manager owns it; left alone
  release (unowned)  only the legacy operator owned it; afterwards nobody does, so it stays
  unowned            nobody owned it before either
  add / change       the first apply adds it or changes its value: the pods roll
  operator           the operator already owned it
The last column is the same key with the opposite --adopt-legacy-ownership.

Exit code 3 with --fail-on-prune when anything would be pruned.`,
		Example: `  kubectl llmkube migration plan -A
  kubectl llmkube migration plan -n models --adopt-legacy-ownership -o json
  kubectl llmkube migration plan -A --fail-on-prune && helm upgrade ...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Check(format); err != nil {
				return err
			}
			c, err := cluster.New(kube)
			if err != nil {
				return err
			}
			ns := c.Namespace
			if allNamespaces {
				ns = ""
			}
			plans, err := planAll(cmd.Context(), c, ns, op, adopt)
			if err != nil {
				return err
			}
			report := planReport{FieldManager: op.fieldManager, LegacyFieldManagers: op.legacyFieldManagers,
				AdoptLegacyOwnership: adopt, Plans: plans}
			if report.LegacyFieldManagers == nil {
				report.LegacyFieldManagers = []string{}
			}
			for _, p := range plans {
				report.Prunes = report.Prunes || p.Prunes()
			}
			if format == output.JSON || format == output.YAML {
				err = output.Data(cmd.OutOrStdout(), format, report)
			} else {
				err = printPlans(cmd.OutOrStdout(), report, ns)
			}
			if err != nil {
				return err
			}
			if failOnPrune && report.Prunes {
				return &exitCode{code: exitPrunes, msg: "the migration would prune keys (--fail-on-prune)"}
			}
			return nil
		},
	}
	plan.Flags().StringVarP(&format, "output", "o", "", "Output format: json or yaml (a table when empty).")
	plan.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "Every namespace.")
	plan.Flags().BoolVar(&failOnPrune, "fail-on-prune", false, "Exit with code 3 when the migration would prune anything.")
	plan.Flags().BoolVar(&adopt, "adopt-legacy-ownership", false, "The operator's --adopt-legacy-ownership.")
	group.AddCommand(plan)
	return group
}

// planAll previews the migration of every InferenceService's and ModelRouter's Deployment in ns
// (every namespace when empty), in namespace and name order.
func planAll(ctx context.Context, c *cluster.Client, ns string, op *operatorFlags, adopt bool) ([]*migration.Plan, error) {
	opts := migration.Options{FieldManager: op.fieldManager, Legacy: op.legacy(adopt)}
	plans := []*migration.Plan{}
	owners, err := c.Owners(ctx, ns)
	if err != nil {
		return nil, err
	}
	var candidates []migration.Candidate
	for _, o := range owners {
		set, err := op.plan(ctx, c, o)
		if err != nil {
			return nil, err
		}
		more, err := migration.Candidates(ctx, c, set, o.Deployment)
		if err != nil {
			return nil, err
		}
		candidates = append(candidates, more...)
	}
	for _, cand := range candidates {
		p, err := migration.For(cand, opts)
		if err != nil {
			return nil, fmt.Errorf("planning the migration of %s (%s %s/%s): %w", cand.Owner, cand.Live.GetObjectKind().GroupVersionKind().Kind,
				cand.Live.GetNamespace(), cand.Live.GetName(), err)
		}
		if p != nil {
			plans = append(plans, p)
		}
	}
	return plans, nil
}

func printPlans(w io.Writer, r planReport, ns string) error {
	where := "namespace " + ns
	if ns == "" {
		where = "any namespace"
	}
	if len(r.Plans) == 0 {
		fmt.Fprintf(w, "No object in %s carries ownership of the records-based operator (legacy field managers: %s): nothing to migrate.\n",
			where, strings.Join(r.LegacyFieldManagers, ","))
		return nil
	}
	alt := "WITH --adopt-legacy-ownership"
	if r.AdoptLegacyOwnership {
		alt = "WITHOUT --adopt-legacy-ownership"
	}
	var rows [][]string
	for _, p := range r.Plans {
		altOf := map[string]string{}
		for _, k := range p.Alternative.Keys {
			altOf[k.Part+":"+k.Key] = k.Action
		}
		for _, k := range p.Outcome.Keys {
			if k.Part == migration.PartField && k.Action == migration.ActionRelease {
				continue // in the summary: mostly defaults the API server filled in
			}
			rows = append(rows, []string{p.Namespace + "/" + p.Kind + "/" + p.Name, k.Part, k.Key, k.Value, k.Action, managed.Join(k.Owners), altOf[k.Part+":"+k.Key]})
		}
	}
	if err := output.Columns(w, []string{"OBJECT", "PART", "KEY", "VALUE", "ACTION", "OWNERS AFTER", alt}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, p := range r.Plans {
		var podKeys []string
		for _, id := range p.Outcome.Unowned {
			if !strings.HasPrefix(id, migration.PartField+":") {
				podKeys = append(podKeys, id)
			}
		}
		fmt.Fprintf(w, "%s/%s (%s %s): ", p.Namespace, p.Owner, p.Kind, p.Name)
		if p.Kind == "Deployment" {
			rolls := "no pod rolls"
			if p.Outcome.Rolls {
				rolls = "pods roll"
			}
			fmt.Fprintf(w, "%s; unowned pod keys afterwards [%s]; ", rolls, strings.Join(podKeys, ", "))
		}
		fmt.Fprintf(w, "prune [%s]; drops Update entries of [%s]; removes [%s]",
			strings.Join(p.Outcome.Pruned, ", "), strings.Join(p.LegacyManagersDropped, ", "), strings.Join(p.RecordsRemoved, ", "))
		var released []string
		for _, k := range p.Outcome.Keys {
			if k.Part == migration.PartField && k.Action == migration.ActionRelease {
				released = append(released, k.Key)
			}
		}
		if len(released) > 0 {
			more := ""
			if len(released) > 3 {
				more = fmt.Sprintf(", and %d more (-o json lists them)", len(released)-3)
				released = released[:3]
			}
			fmt.Fprintf(w, "; releases other fields (unowned afterwards, never deleted) [%s%s]", strings.Join(released, ", "), more)
		}
		if len(p.InvalidRecordEntries) > 0 {
			fmt.Fprintf(w, "; ignores record entries that are not keys [%s]", strings.Join(p.InvalidRecordEntries, ", "))
		}
		fmt.Fprintln(w)
	}
	return nil
}
