/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/llmkube/operator/internal/plugin/diff"
	"github.com/llmkube/operator/internal/plugin/output"
)

func newDiffCmd(kube *genericclioptions.ConfigFlags, op *operatorFlags) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "diff isvc/NAME | mr/NAME",
		Short: "What the operator's next apply would change (server-side dry-run apply, unified diff)",
		Long: `What the operator's next apply would change: each object the operator applies for the target is
sent as a server-side dry-run apply under the operator's field manager, and the API server's
answer is diffed with the live object. Nothing is written. A pod-template change the rollout gate
defers (rolloutPolicy.waitForIdle) is shown: it is what the operator applies once the gate opens.`,
		Example: `  kubectl llmkube diff isvc/llama -n models
  kubectl llmkube diff isvc/llama -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTargets(kube, "isvc", "mr"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, t, objs, err := readTarget(cmd, kube, format, args[0])
			if err != nil {
				return err
			}
			set, err := op.desiredOf(cmd.Context(), c, objs)
			if err != nil {
				return err
			}
			d, err := set.Apply(objs.Deployment)
			if err != nil {
				return err
			}
			changes, err := diff.Compute(cmd.Context(), c, op.fieldManager, set.InOrder(d))
			if err != nil {
				return err
			}
			if format == output.JSON || format == output.YAML {
				return output.Data(cmd.OutOrStdout(), format, map[string]any{"object": t.Short(), "namespace": c.Namespace, "objects": changes})
			}
			w := cmd.OutOrStdout()
			if objs.Deployment != nil && op.legacy(false).NeedsMigration(objs.Deployment, op.fieldManager) {
				fmt.Fprintf(w, "# Deployment %s carries traces of the records-based operator: the operator migrates it before this apply; see kubectl llmkube migration plan -n %s\n", objs.Deployment.Name, c.Namespace)
			}
			for _, ch := range changes {
				if ch.Action == diff.ActionUnchanged {
					fmt.Fprintf(w, "# %s %s/%s: unchanged\n", ch.Kind, ch.Namespace, ch.Name)
					continue
				}
				fmt.Fprintf(w, "# %s %s/%s: %s\n%s", ch.Kind, ch.Namespace, ch.Name, ch.Action, ch.Diff)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "Output format: json or yaml (a unified diff when empty).")
	return cmd
}
