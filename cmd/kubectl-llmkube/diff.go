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
	"github.com/llmkube/operator/internal/plugin/diff"
)

// Exit codes of diff, as kubectl diff's.
const (
	exitDiffChanges = 1
	exitDiffError   = 2
)

func newDiffCmd(kube *genericclioptions.ConfigFlags, op *cluster.Operator) *cobra.Command {
	var (
		format        string
		file          string
		allNamespaces bool
		applyAs       string
	)
	cmd := &cobra.Command{
		Use:   "diff (TYPE/NAME... | TYPE NAME... | -f FILE | -A)",
		Short: "What the operator's next apply would change (server-side dry-run apply, unified diff)",
		Long: `What the operator's next apply would change, computed by the operator's own plan (the function its
reconciler applies): each object the operator would write is sent as a server-side dry-run apply
under the operator's field manager and the API server's answer is diffed with the live object; an
object the operator would not write is "unchanged", as the operator decides it. Nothing is written.
A pod-template change the rollout gate defers (rolloutPolicy.waitForIdle) is shown: it is what
the operator applies once the gate opens. A missing Model or backend is said in a comment line.

-f FILE (or -f - for stdin) previews a manifest that is not applied yet: what the operator will do
if it lands.

Exit status, as kubectl diff: 0 nothing would change, 1 something would change, 2 or more an error.`,
		Example: `  kubectl llmkube diff isvc/llama -n models
  kubectl llmkube diff isvc llama chat -n models
  kubectl llmkube diff -f llama.yaml
  kubectl llmkube diff -A -o name`,
		ValidArgsFunction: completeTargets(kube, "isvc", "mr"),
		RunE: func(cmd *cobra.Command, args []string) error {
			changes, err := runDiff(cmd, kube, op, args, file, allNamespaces, format, applyAs)
			if err != nil {
				return &exitCode{code: exitDiffError, msg: "error: " + err.Error()}
			}
			if changes {
				return &exitCode{code: exitDiffChanges}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "Output format: json, yaml or name (a unified diff when empty).")
	cmd.Flags().StringVarP(&file, "filename", "f", "", "A manifest of InferenceServices and ModelRouters to preview (- for stdin).")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "Every InferenceService and ModelRouter of every namespace.")
	cmd.Flags().StringVar(&applyAs, "apply-as", "", "The field manager that will apply the -f manifest (default: the one that applied the live object, else kubectl). A field the manifest drops is removed only from what that manager owns.")
	// A flag error is an error (2), never "differences" (1), as kubectl diff's.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitCode{code: exitDiffError, msg: "error: " + err.Error()}
	})
	return cmd
}

// runDiff diffs every object named and says whether anything would change.
func runDiff(cmd *cobra.Command, kube *genericclioptions.ConfigFlags, op *cluster.Operator, args []string, file string, all bool, format, applyAs string) (bool, error) {
	if err := plugin.CheckFormat("diff", format, plugin.JSON, plugin.YAML, plugin.Name); err != nil {
		return false, err
	}
	sel, err := selection(cmd, "diff", args, file, all)
	if err != nil {
		return false, err
	}
	c, err := cluster.New(kube)
	if err != nil {
		return false, err
	}
	sel.ApplyAs = applyAs
	objs, err := c.Select(cmd.Context(), sel)
	if err != nil {
		return false, err
	}
	reports, err := diff.Reports(cmd.Context(), c, objs, *op)
	if err != nil {
		return false, err
	}
	return diff.Changes(reports), diff.Print(cmd.OutOrStdout(), format, reports, file != "" || all)
}
