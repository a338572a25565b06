/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmkube/operator/internal/plugin/cluster"
)

// selection is what a command names, in exactly one of kubectl's ways: TYPE/NAME..., TYPE
// NAME..., -f FILE (file is "" where the command has no -f) or -A.
func selection(cmd *cobra.Command, verb string, args []string, file string, all bool) (cluster.Selection, error) {
	forms := "TYPE/NAME..., TYPE NAME... or -A"
	if cmd.Flags().Lookup("filename") != nil {
		forms = "TYPE/NAME..., TYPE NAME..., -f FILE or -A"
	}
	n := 0
	for _, given := range []bool{len(args) > 0, file != "", all} {
		if given {
			n++
		}
	}
	if n != 1 {
		return cluster.Selection{}, fmt.Errorf("name what to %s, in one way: %s", verb, forms)
	}
	return cluster.Selection{Args: args, File: file, Stdin: cmd.InOrStdin(), All: all}, nil
}
