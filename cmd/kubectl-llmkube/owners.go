/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin/cluster"
	"github.com/llmkube/operator/internal/plugin/desired"
	"github.com/llmkube/operator/internal/plugin/managed"
	"github.com/llmkube/operator/internal/plugin/output"
	"github.com/llmkube/operator/internal/plugin/owners"
)

// ownersReport is the -o json/yaml form of `owners`.
type ownersReport struct {
	Object       string       `json:"object"`
	Namespace    string       `json:"namespace"`
	Deployment   string       `json:"deployment"`
	FieldManager string       `json:"fieldManager"`
	LegacyTraces bool         `json:"legacyTraces"`
	Rows         []owners.Row `json:"rows"`
}

func newOwnersCmd(kube *genericclioptions.ConfigFlags, op *operatorFlags) *cobra.Command {
	var format string
	var allFields bool
	cmd := &cobra.Command{
		Use:   "owners (TYPE/NAME | TYPE NAME)",
		Short: "Who owns each pod-template label and annotation of the generated Deployment, and why",
		Long: `Who owns each pod-template label and annotation of the generated Deployment, and why.

SOURCE says where a key comes from:
  spec      the operator applies it because spec.podLabels / spec.podAnnotations ask
  operator  the operator applies it on its own (selector, runtime, hints)
  other     another manager owns it; the operator never touches it
  unowned   nobody owns it, so no apply will ever remove it
FLAGS: conflict (another manager changed a key the operator applies), legacy (the records-based
operator's traces cover it: see 'migration plan'), unowned, pending (the next apply adds it).`,
		Example: `  kubectl llmkube owners isvc/llama -n models
  kubectl llmkube owners mr/chat --all-fields
  kubectl llmkube owners isvc/llama -o json`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: completeTargets(kube, "isvc", "mr"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, t, objs, err := readTarget(cmd, kube, format, args)
			if err != nil {
				return err
			}
			if objs.Deployment == nil {
				if set, err := op.plan(cmd.Context(), c, objs); err == nil && set.Blocked != "" {
					return fmt.Errorf("%s has no Deployment: %s", t.Short(), set.BlockedMessage)
				}
				return fmt.Errorf("%s has no Deployment %s/%s yet: is the operator running? (kubectl get deploy -n %s; kubectl llmkube diff %s shows what it would create)",
					t.Short(), c.Namespace, objs.DeploymentName(), c.Namespace, t.Short())
			}
			set, err := op.plan(cmd.Context(), c, objs)
			if err != nil {
				return err
			}
			want, err := set.Apply(objs.Deployment)
			if err != nil {
				return err
			}
			legacy := op.legacy(false)
			rows, err := owners.PodMetadata{
				Live: objs.Deployment, Desired: want, SpecLabels: set.SpecLabels, SpecAnnotations: set.SpecAnnotations,
				FieldManager: op.fieldManager, Legacy: legacy,
			}.Rows()
			if err != nil {
				return err
			}
			if allFields {
				more, err := everyField(cmd, c, objs, set, want, op.fieldManager)
				if err != nil {
					return err
				}
				rows = append(rows, more...)
			}
			report := ownersReport{Object: t.Short(), Namespace: c.Namespace, Deployment: objs.Deployment.Name,
				FieldManager: op.fieldManager, LegacyTraces: legacy.NeedsMigration(objs.Deployment, op.fieldManager), Rows: rows}
			if format == output.JSON || format == output.YAML {
				return output.Data(cmd.OutOrStdout(), format, report)
			}
			return printOwners(cmd, report)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "Output format: json or yaml (a table when empty).")
	cmd.Flags().BoolVar(&allFields, "all-fields", false, "Also list every field the operator applies, on every object it applies.")
	return cmd
}

// everyField lists the rows of every field of every object the operator applies for the target.
func everyField(cmd *cobra.Command, c *cluster.Client, objs *cluster.Objects, set *desired.Set, want runtime.ApplyConfiguration, manager string) ([]owners.Row, error) {
	tc := ownership.NewTypeConverter(cluster.Scheme())
	rows, err := owners.Fields(tc, "Deployment", objs.Deployment, want, manager)
	if err != nil {
		return nil, err
	}
	for _, ac := range set.Others() {
		live, kind, err := c.LiveOf(cmd.Context(), ac)
		if err != nil {
			return nil, err
		}
		more, err := owners.Fields(tc, kind, live, ac, manager)
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

func printOwners(cmd *cobra.Command, r ownersReport) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%s  Deployment %s/%s  field manager %s\n", r.Object, r.Namespace, r.Deployment, r.FieldManager)
	if r.LegacyTraces {
		fmt.Fprintf(w, "legacy traces of the records-based operator are present: kubectl llmkube migration plan -n %s\n", r.Namespace)
	}
	fmt.Fprintln(w)
	rows := make([][]string, 0, len(r.Rows))
	for _, row := range r.Rows {
		value := row.Value
		if row.Want != nil && *row.Want != row.Value && row.Value != "<absent>" {
			value += " (wants " + *row.Want + ")"
		}
		flags := strings.Join(row.Flags, ",")
		if row.Note != "" {
			flags += ": " + row.Note
		}
		rows = append(rows, []string{row.Part, row.Key, value, row.Source, managed.Join(row.Owners), flags})
	}
	return output.Columns(w, []string{"PART", "KEY", "VALUE", "SOURCE", "OWNERS", "FLAGS"}, rows)
}
