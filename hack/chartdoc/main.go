/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command chartdoc writes charts/llmkube/README.md: README.header.md, then the values table from
// values.yaml's comments (internal/chartdoc).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmkube/operator/internal/chartdoc"
)

func main() {
	chart := "charts/llmkube"
	if len(os.Args) > 1 {
		chart = os.Args[1]
	}
	if err := write(chart); err != nil {
		fmt.Fprintln(os.Stderr, "chartdoc:", err)
		os.Exit(1)
	}
}

func write(chart string) error {
	header, err := os.ReadFile(filepath.Join(chart, "README.header.md"))
	if err != nil {
		return err
	}
	values, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return err
	}
	out, err := chartdoc.Render(string(header), values)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(chart, "README.md"), out, 0o644)
}
