/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package metricsdoc reads the metrics table of docs/operations.md, so tests can hold the code and the
// documentation to each other.
package metricsdoc

import (
	"os"
	"path/filepath"
	"strings"
)

// Metric is one row of the table.
type Metric struct {
	Name, Type string
	Labels     []string
}

// Parse reads the rows of every table in readme whose first cell is a metric name in backquotes
// starting with llmkube_: | `name` | type | `label`, `label` (or —) | meaning |.
func Parse(readme string) map[string]Metric {
	out := map[string]Metric{}
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "| `llmkube_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) < 4 {
			continue
		}
		m := Metric{Name: strings.Trim(strings.TrimSpace(cells[0]), "`"), Type: strings.TrimSpace(cells[1])}
		for _, l := range strings.Split(cells[2], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" && l != "—" && l != "-" {
				m.Labels = append(m.Labels, l)
			}
		}
		out[m.Name] = m
	}
	return out
}

// Page is the page of the repository that holds the metrics table.
const Page = "docs/operations.md"

// ReadRepo parses the metrics table of the repository at root.
func ReadRepo(root string) (map[string]Metric, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(Page)))
	if err != nil {
		return nil, err
	}
	return Parse(string(data)), nil
}
