/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package plugin is what every command of kubectl-llmkube shares: kubectl's -o forms. A command's
// logic lives in the packages below it: cluster (the client, the objects a command names and the
// operator's plan for them), diff, owners and migration. The output never colours: it is read in
// terminals, logs and CI alike.
package plugin

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Formats -o accepts.
const (
	Table = ""
	JSON  = "json"
	YAML  = "yaml"
	// Name prints one TYPE/NAME a line, as kubectl's -o name.
	Name = "name"
	// Wide is kubectl's table with more columns; the commands whose table already has every
	// column refuse it rather than print the same table.
	Wide = "wide"
)

// CheckFormat refuses an -o value that command does not print: an unknown one, or one of
// kubectl's (wide, name) the command has no meaning for, so that no -o is ever ignored.
func CheckFormat(command, format string, accepted ...string) error {
	if format == Table || slices.Contains(accepted, format) {
		return nil
	}
	var forms []string
	for _, f := range accepted {
		forms = append(forms, "-o "+f)
	}
	why := ""
	if format == Wide {
		why = ": it has nothing wider than its default output"
	}
	return fmt.Errorf("-o %s is not supported by %s%s; use %s, or no -o", format, command, why, strings.Join(forms, ", "))
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

// Named is a report that lists objects in kubectl's -o name form.
type Named interface {
	TypedNames() []string
}

// Print writes reports in format: -o json and yaml one report as itself or, many (several
// named, or -A, -f), a list of them as {"items": [...]}; -o name every object of every report,
// one a line; otherwise the command's table.
func Print[T Named](w io.Writer, format string, reports []T, many bool, table func() error) error {
	switch format {
	case JSON, YAML:
		if !many && len(reports) == 1 {
			return Data(w, format, reports[0])
		}
		return Data(w, format, map[string]any{"items": reports})
	case Name:
		for _, r := range reports {
			for _, n := range r.TypedNames() {
				if _, err := fmt.Fprintln(w, n); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return table()
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

// ObjectName is an object as kubectl's -o name prints it: deployment.apps/NAME, service/NAME.
func ObjectName(gk schema.GroupKind, name string) string {
	if gk.Group == "" {
		return strings.ToLower(gk.Kind) + "/" + name
	}
	return strings.ToLower(gk.Kind) + "." + gk.Group + "/" + name
}
