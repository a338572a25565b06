/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/llmkube/operator/internal/plugin"
	"github.com/llmkube/operator/internal/plugin/cluster"
	"github.com/llmkube/operator/internal/plugin/migration"
)

// exitPrunes is the exit code of `migration plan --fail-on-prune` when something would be pruned.
const exitPrunes = 3

func newMigrationCmd(kube *genericclioptions.ConfigFlags, op *cluster.Operator) *cobra.Command {
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
			if err := plugin.CheckFormat("migration plan", format, plugin.JSON, plugin.YAML); err != nil {
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
			report, err := migration.All(cmd.Context(), c, ns, *op, adopt)
			if err != nil {
				return err
			}
			if err := migration.Print(cmd.OutOrStdout(), format, report); err != nil {
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
