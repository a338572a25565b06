/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/internal/plugin"
	"github.com/llmkube/operator/internal/plugin/cluster"
	"github.com/llmkube/operator/version"
)

// operatorSelector finds the operator's Deployment as the chart labels it.
var operatorSelector = client.MatchingLabels{"app.kubernetes.io/name": "llmkube"}

type versionReport struct {
	Plugin   string `json:"plugin"`
	Operator string `json:"operator,omitempty"`
	Match    bool   `json:"match"`
	Note     string `json:"note,omitempty"`
}

func newVersionCmd(kube *genericclioptions.ConfigFlags) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "The plugin's version, the operator's, and whether they match",
		Long: `The plugin's version, the operator's (the image tag of the Deployment labelled
app.kubernetes.io/name=llmkube in any namespace), and whether they match: the previews are exact
only when the plugin runs the operator's own version of its plans.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := plugin.CheckFormat("version", format, plugin.JSON, plugin.YAML); err != nil {
				return err
			}
			r := versionReport{Plugin: version.Version}
			if c, err := cluster.New(kube); err != nil {
				r.Note = err.Error()
			} else {
				list := &appsv1.DeploymentList{}
				if err := c.List(cmd.Context(), list, operatorSelector); err != nil {
					r.Note = cluster.Explain(err, "listing Deployment", "", "").Error()
				}
				for _, d := range list.Items {
					for _, ctr := range d.Spec.Template.Spec.Containers {
						if i := strings.LastIndex(ctr.Image, ":"); i > 0 && r.Operator == "" {
							r.Operator = ctr.Image[i+1:]
						}
					}
				}
				if r.Operator == "" && r.Note == "" {
					r.Note = "no operator Deployment (label app.kubernetes.io/name=llmkube) found"
				}
			}
			r.Match = r.Operator == r.Plugin
			if format != plugin.Table {
				return plugin.Data(cmd.OutOrStdout(), format, r)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "plugin:   %s\n", r.Plugin)
			if r.Operator != "" {
				fmt.Fprintf(w, "operator: %s\n", r.Operator)
			}
			if r.Note != "" {
				fmt.Fprintf(w, "note:     %s\n", r.Note)
			}
			if r.Match {
				fmt.Fprintln(w, "match:    yes")
			} else {
				fmt.Fprintln(w, "match:    no: run the plugin of the operator's version, or its previews may differ from what the operator does")
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "Output format: json or yaml.")
	return cmd
}
