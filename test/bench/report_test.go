/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Both reports are written the same way: NAME.json with the result, NAME.md with a title, the
// command that reproduces it and the tables.
func TestReportsAreWrittenAsJSONAndMarkdown(t *testing.T) {
	dir := t.TempDir()
	r := &FairResult{Machine: "test machine", Runs: []FairRun{{N: 20, Order: fairOrder(0)}}}
	if err := WriteFair(r, dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "fair.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(md), "# Fair benchmark\n\nReproduce: `make bench-fair`.\n\n") || !strings.Contains(string(md), "test machine") {
		t.Errorf("fair.md starts with %q", string(md)[:min(len(md), 120)])
	}
	data, err := os.ReadFile(filepath.Join(dir, "fair.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil || back["machine"] != "test machine" {
		t.Errorf("fair.json = %s (%v), want the result", data, err)
	}
}
