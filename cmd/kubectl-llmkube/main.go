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
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin/cluster"
	"github.com/llmkube/operator/internal/plugin/desired"
)

// exitCode is an error that ends the plugin with a given code (3: --fail-on-prune).
type exitCode struct {
	code int
	msg  string
}

func (e *exitCode) Error() string { return e.msg }

// operatorFlags mirror the operator's own flags that decide what it applies and migrates; they
// must match how the operator runs for the previews to be right.
type operatorFlags struct {
	fieldManager          string
	legacyFieldManagers   []string
	emitScrapeAnnotations bool
	routerProxyImage      string
}

func (o *operatorFlags) desired() desired.Options {
	return desired.Options{FieldManager: o.fieldManager, EmitScrapeAnnotations: o.emitScrapeAnnotations, RouterProxyImage: o.routerProxyImage}
}

func (o *operatorFlags) legacy(adopt bool) ownership.Legacy {
	return ownership.Legacy{FieldManagers: o.legacyFieldManagers, Adopt: adopt}
}

func newRoot(streams genericiooptions.IOStreams) *cobra.Command {
	kube := genericclioptions.NewConfigFlags(true)
	op := &operatorFlags{}
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
	root.PersistentFlags().StringVar(&op.fieldManager, "field-manager", ownership.DefaultFieldManager, "The operator's --field-manager.")
	root.PersistentFlags().StringSliceVar(&op.legacyFieldManagers, "legacy-field-managers", ownership.DefaultLegacyFieldManagers, "The operator's --legacy-field-managers (empty: none).")
	root.PersistentFlags().BoolVar(&op.emitScrapeAnnotations, "emit-scrape-annotations", false, "The operator's --emit-scrape-annotations.")
	root.PersistentFlags().StringVar(&op.routerProxyImage, "router-proxy-image", "", "The operator's --router-proxy-image (empty: the proxy image of the plugin's version).")
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

// plan is what the operator would apply for the InferenceService or ModelRouter of objs: the
// kind's own plan, read through the plugin's client.
func (o *operatorFlags) plan(ctx context.Context, c *cluster.Client, objs *cluster.Objects) (*desired.Set, error) {
	if objs.ISVC != nil {
		return desired.ForInferenceService(ctx, c, c.RESTMapper(), objs.ISVC, o.desired())
	}
	return desired.ForModelRouter(ctx, c, objs.Router, o.desired())
}
