/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmkube/operator/test/docblocks"
)

// CI runs the test command the README gives a newcomer, so the two cannot part: the command of
// the README's `make test` line is a line of .ci/run.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	blocks, err := docblocks.Parse(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var command string
	for _, b := range blocks {
		for _, line := range strings.Split(b.Body, "\n") {
			if cmd, _, _ := strings.Cut(line, "#"); strings.HasPrefix(strings.TrimSpace(cmd), "make test") {
				command = strings.TrimSpace(cmd)
				break
			}
		}
		if command != "" {
			break
		}
	}
	if command == "" {
		t.Fatal("the README shows no `make test` command")
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ci), "\n") {
		if strings.TrimSpace(line) == command {
			return
		}
	}
	t.Errorf(".ci/run does not run the README's test command %q", command)
}
