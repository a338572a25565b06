/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/internal/plugin/cluster"
)

// registerCompletions completes -n with namespaces; kubectl asks the plugin through
// kubectl_complete-llmkube (make plugin installs it).
func registerCompletions(root *cobra.Command, kube *genericclioptions.ConfigFlags) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		c, err := cluster.New(kube)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list := &corev1.NamespaceList{}
		if err := c.List(cmd.Context(), list); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, ns := range list.Items {
			if strings.HasPrefix(ns.Name, prefix) {
				out = append(out, ns.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// completeTargets completes isvc/NAME and mr/NAME in the namespace; kinds is "isvc", "mr" or both.
func completeTargets(kube *genericclioptions.ConfigFlags, kinds ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := cluster.New(kube)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, k := range kinds {
			switch k {
			case "isvc":
				l := &inferencev1alpha1.InferenceServiceList{}
				if c.List(cmd.Context(), l, client.InNamespace(c.Namespace)) == nil {
					for _, i := range l.Items {
						out = append(out, "isvc/"+i.Name)
					}
				}
			case "mr":
				l := &inferencev1alpha1.ModelRouterList{}
				if c.List(cmd.Context(), l, client.InNamespace(c.Namespace)) == nil {
					for _, r := range l.Items {
						out = append(out, "mr/"+r.Name)
					}
				}
			}
		}
		var match []string
		for _, s := range out {
			if strings.HasPrefix(s, prefix) {
				match = append(match, s)
			}
		}
		return match, cobra.ShellCompDirectiveNoFileComp
	}
}
