/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package output prints a command's result as aligned columns, or as JSON or YAML for scripts.
// It never colours: the plugin's output is read in terminals, logs and CI alike.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// Formats -o accepts.
const (
	Table = ""
	JSON  = "json"
	YAML  = "yaml"
	// Name prints one RESOURCE/NAME a line, as kubectl's -o name.
	Name = "name"
)

// resources are the resource names (kubectl's -o name form) of the kinds the plugin prints.
var resources = map[string]string{
	"Deployment": "deployment.apps", "Service": "service", "ConfigMap": "configmap",
	"ServiceAccount": "serviceaccount", "Role": "role.rbac.authorization.k8s.io",
	"RoleBinding": "rolebinding.rbac.authorization.k8s.io", "PersistentVolumeClaim": "persistentvolumeclaim",
	"HorizontalPodAutoscaler": "horizontalpodautoscaler.autoscaling",
	"InferencePool":           "inferencepool.inference.networking.k8s.io",
	"HTTPRoute":               "httproute.gateway.networking.k8s.io",
	"InferenceService":        "inferenceservice.inference.llmkube.dev",
	"ModelRouter":             "modelrouter.inference.llmkube.dev",
}

// Resource is kind as kubectl's -o name prints it (deployment.apps, service, ...).
func Resource(kind string) string {
	if r, ok := resources[kind]; ok {
		return r
	}
	return strings.ToLower(kind)
}

// Check refuses an -o value the commands do not print.
func Check(format string) error {
	switch format {
	case Table, JSON, YAML:
		return nil
	}
	// Note: -o wide would print the same table; refused rather than silently ignored.
	return fmt.Errorf("-o %s is not supported here: use -o json or -o yaml (or no -o for a table)", format)
}

// Data prints v as JSON (indented, fields in a fixed order) or YAML.
func Data(w io.Writer, format string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == YAML {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	} else {
		data = append(data, '\n')
	}
	_, err = w.Write(data)
	return err
}

// Columns writes rows under a header, aligned; an empty cell prints as "-".
func Columns(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			if c == "" {
				c = "-"
			}
			cells[i] = c
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
