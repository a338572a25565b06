/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// kubectl-llmkube is a kubectl plugin (`kubectl llmkube ...`) that explains the ownership of
// the objects the llmkube operator applies and previews what the operator will do: who owns each
// pod-template key, what an upgrade's migration will prune, what the next apply will change.
// This file is flags and wiring; the logic lives in internal/plugin.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin/cluster"
)

// exitCode is an error that ends the plugin with a given code (3: --fail-on-prune).
type exitCode struct {
	code int
	msg  string
}

func (e *exitCode) Error() string { return e.msg }

func newRoot(streams genericiooptions.IOStreams) *cobra.Command {
	kube := genericclioptions.NewConfigFlags(true)
	// The operator's own flags that decide what it applies and migrates; they must match how
	// the operator runs for the previews to be right.
	op := &cluster.Operator{}
	root := &cobra.Command{
		Use:   "kubectl-llmkube",
		Short: "Explain and preview what the llmkube operator owns and applies",
		Long: `Explain and preview what the llmkube operator owns and applies.

  kubectl llmkube owners isvc/NAME        who owns each pod label and annotation, and why
  kubectl llmkube migration plan -A       what the upgrade from the records-based operator will do
  kubectl llmkube diff isvc/NAME          what the operator's next apply would change

The --field-manager, --legacy-field-managers and --emit-scrape-annotations flags must match the
operator's own flags (their defaults are the operator's defaults).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl llmkube"},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	kube.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&op.FieldManager, "field-manager", ownership.DefaultFieldManager, "The operator's --field-manager.")
	root.PersistentFlags().StringSliceVar(&op.LegacyFieldManagers, "legacy-field-managers", ownership.DefaultLegacyFieldManagers, "The operator's --legacy-field-managers (empty: none).")
	root.PersistentFlags().BoolVar(&op.EmitScrapeAnnotations, "emit-scrape-annotations", false, "The operator's --emit-scrape-annotations.")
	root.PersistentFlags().StringVar(&op.RouterProxyImage, "router-proxy-image", "", "The operator's --router-proxy-image (empty: the proxy image of the plugin's version).")
	registerCompletions(root, kube)

	root.AddCommand(newOwnersCmd(kube, op), newMigrationCmd(kube, op), newDiffCmd(kube, op), newVersionCmd(kube))
	return root
}

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := newRoot(streams).Execute(); err != nil {
		var ec *exitCode
		if errors.As(err, &ec) {
			if ec.msg != "" {
				fmt.Fprintln(os.Stderr, ec.msg)
			}
			os.Exit(ec.code)
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
