/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmkube/operator/test/helmtool"
	"github.com/llmkube/operator/version"
)

// `make chart` twice, a second apart, writes the same bytes: what the Makefile promises of every
// release artifact.
// Proves A8.
func TestMakeChartIsByteIdentical(t *testing.T) {
	var archives [][]byte
	for i := range 2 {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond) // tar headers keep whole seconds
		}
		dir := t.TempDir()
		cmd := exec.Command("make", "-s", "chart", "BUILD_DIR="+dir, "REGISTRY=")
		cmd.Dir = helmtool.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make chart: %v\n%s", err, out)
		}
		data, err := os.ReadFile(filepath.Join(dir, "chart", "llmkube-"+version.Version+".tgz"))
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, data)
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Fatal("two runs of make chart wrote different archives")
	}
}
