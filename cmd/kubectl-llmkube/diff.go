/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/llmkube/operator/internal/plugin/cluster"
	"github.com/llmkube/operator/internal/plugin/diff"
	"github.com/llmkube/operator/internal/plugin/output"
)

// Exit codes of diff, as kubectl diff's.
const (
	exitDiffNone    = 0
	exitDiffChanges = 1
	exitDiffError   = 2
)

// diffOfTarget is the -o json/yaml form of one target's diff.
type diffOfTarget struct {
	Object    string `json:"object"`
	Namespace string `json:"namespace"`
	// Blocked says why the operator applies no workload (its Model is missing); empty otherwise.
	Blocked string        `json:"blocked,omitempty"`
	Objects []diff.Object `json:"objects"`
}

func newDiffCmd(kube *genericclioptions.ConfigFlags, op *operatorFlags) *cobra.Command {
	var (
		format        string
		file          string
		allNamespaces bool
	)
	cmd := &cobra.Command{
		Use:   "diff (TYPE/NAME... | TYPE NAME... | -f FILE | -A)",
		Short: "What the operator's next apply would change (server-side dry-run apply, unified diff)",
		Long: `What the operator's next apply would change, computed by the operator's own plan (the function its
reconciler applies): each object the operator would write is sent as a server-side dry-run apply
under the operator's field manager and the API server's answer is diffed with the live object; an
object the operator would not write is "unchanged", as the operator decides it. Nothing is written.
A pod-template change the rollout gate defers (rolloutPolicy.waitForIdle) is shown: it is what
the operator applies once the gate opens.

-f FILE (or -f - for stdin) previews a manifest that is not applied yet: what the operator will do
if it lands.

Exit status, as kubectl diff: 0 nothing would change, 1 something would change, 2 or more an error.`,
		Example: `  kubectl llmkube diff isvc/llama -n models
  kubectl llmkube diff isvc llama chat -n models
  kubectl llmkube diff -f llama.yaml
  kubectl llmkube diff -A -o name`,
		ValidArgsFunction: completeTargets(kube, "isvc", "mr"),
		RunE: func(cmd *cobra.Command, args []string) error {
			changes, err := runDiff(cmd, kube, op, args, file, allNamespaces, format)
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
	return cmd
}

// runDiff diffs every target and says whether anything would change.
func runDiff(cmd *cobra.Command, kube *genericclioptions.ConfigFlags, op *operatorFlags, args []string, file string, all bool, format string) (bool, error) {
	switch format {
	case output.Table, output.JSON, output.YAML, output.Name:
	default:
		return false, fmt.Errorf("-o %s: diff prints a unified diff, or -o json, -o yaml or -o name", format)
	}
	if n := countTrue(len(args) > 0, file != "", all); n != 1 {
		return false, errors.New("name what to diff: TYPE/NAME..., TYPE NAME..., -f FILE or -A")
	}
	c, err := cluster.New(kube)
	if err != nil {
		return false, err
	}
	ctx := cmd.Context()
	var targets []*cluster.Objects
	switch {
	case file != "":
		var r io.Reader = cmd.InOrStdin()
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return false, err
			}
			defer f.Close()
			r = f
		}
		targets, err = c.Decode(ctx, r, c.Namespace)
	case all:
		targets, err = c.Owners(ctx, "")
	default:
		var ts []cluster.Target
		if ts, err = cluster.ParseTargets(args); err == nil {
			targets, err = c.Read(ctx, c.Namespace, ts)
		}
	}
	if err != nil {
		return false, err
	}
	var docs []diffOfTarget
	changes := false
	for _, t := range targets {
		set, err := op.plan(ctx, c, t)
		if err != nil {
			return false, err
		}
		dep := set.Deployment
		if set.Apply != nil {
			if dep, err = set.Apply(t.Deployment); err != nil {
				return false, err
			}
		}
		objs, err := diff.Compute(ctx, c, op.fieldManager, set.InOrder(dep), set.Delete, t.Object())
		if err != nil {
			return false, err
		}
		changes = changes || diff.Changes(objs)
		docs = append(docs, diffOfTarget{Object: t.Short(), Namespace: t.Namespace(), Blocked: set.BlockedMessage, Objects: objs})
		if t.Deployment != nil && op.legacy(false).NeedsMigration(t.Deployment, op.fieldManager) && format == output.Table {
			fmt.Fprintf(cmd.OutOrStdout(), "# Deployment %s carries traces of the records-based operator: the operator migrates it before this apply; see kubectl llmkube migration plan -n %s\n", t.Deployment.Name, t.Namespace())
		}
	}
	w := cmd.OutOrStdout()
	switch format {
	case output.JSON, output.YAML:
		if len(docs) == 1 && file == "" && !all {
			return changes, output.Data(w, format, docs[0])
		}
		return changes, output.Data(w, format, map[string]any{"items": docs})
	case output.Name:
		for _, d := range docs {
			for _, o := range d.Objects {
				if o.Action != diff.ActionUnchanged {
					fmt.Fprintf(w, "%s/%s\n", output.Resource(o.Kind), o.Name)
				}
			}
		}
		return changes, nil
	}
	for _, d := range docs {
		if d.Blocked != "" {
			fmt.Fprintf(w, "# %s: %s\n", d.Object, d.Blocked)
		}
		for _, ch := range d.Objects {
			if ch.Action == diff.ActionUnchanged {
				fmt.Fprintf(w, "# %s %s/%s: unchanged\n", ch.Kind, ch.Namespace, ch.Name)
				continue
			}
			fmt.Fprintf(w, "# %s %s/%s: %s\n%s", ch.Kind, ch.Namespace, ch.Name, ch.Action, ch.Diff)
		}
	}
	return changes, nil
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
