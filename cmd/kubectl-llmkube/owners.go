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
	"github.com/llmkube/operator/internal/plugin/owners"
)

func newOwnersCmd(kube *genericclioptions.ConfigFlags, op *cluster.Operator) *cobra.Command {
	var (
		format        string
		allFields     bool
		allNamespaces bool
	)
	cmd := &cobra.Command{
		Use:   "owners (TYPE/NAME... | TYPE NAME... | -A)",
		Short: "Who owns each pod-template label and annotation of the generated Deployment, and why",
		Long: `Who owns each pod-template label and annotation of the generated Deployment, and why.

SOURCE says where a key comes from:
  spec      the operator applies it because spec.podLabels / spec.podAnnotations ask
  operator  the operator applies it on its own (selector, runtime, hints)
  other     another manager owns it; the operator never touches it
  unowned   nobody owns it, so no apply will ever remove it
FLAGS: conflict (another manager changed a key the operator applies), legacy (the records-based
operator's traces cover it: see 'migration plan'), unowned, pending (the next apply adds it).

With -A (or several objects) one table lists every object, with NAMESPACE and OBJECT columns;
an object without a Deployment is a comment line saying why (a missing Model, the operator not
running). -o name prints the objects the rows are of (deployment.apps/NAME; with --all-fields the
other objects too). -o wide is refused: there is nothing wider than the table.`,
		Example: `  kubectl llmkube owners isvc/llama -n models
  kubectl llmkube owners isvc llama chat -n models
  kubectl llmkube owners mr/chat --all-fields
  kubectl llmkube owners -A -o name
  kubectl llmkube owners isvc/llama -o json`,
		ValidArgsFunction: completeTargets(kube, "isvc", "mr"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := plugin.CheckFormat("owners", format, plugin.JSON, plugin.YAML, plugin.Name); err != nil {
				return err
			}
			sel, err := selection(cmd, "explain", args, "", allNamespaces)
			if err != nil {
				return err
			}
			c, err := cluster.New(kube)
			if err != nil {
				return err
			}
			objs, err := c.Select(cmd.Context(), sel)
			if err != nil {
				return err
			}
			reports, err := owners.Reports(cmd.Context(), c, objs, *op, allFields, !allNamespaces)
			if err != nil {
				return err
			}
			return owners.Print(cmd.OutOrStdout(), format, reports, allNamespaces || len(objs) > 1)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "Output format: json, yaml or name (a table when empty).")
	cmd.Flags().BoolVar(&allFields, "all-fields", false, "Also list every field the operator applies, on every object it applies.")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "Every InferenceService and ModelRouter of every namespace.")
	return cmd
}
