/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// make run says on one line why its cluster has no real node: what the machine lacks, else which
// of the node's binaries or images are not built, naming the make target that builds them.
// Proves N9.
func TestRealNodeMissingNamesWhatIsNotBuilt(t *testing.T) {
	if machine := CanRunContainers(); machine != nil {
		if got := RealNodeMissing(t.TempDir()); got == nil || got.Error() != machine.Error() {
			t.Fatalf("on a machine that cannot run containers the reason is %v, want %v", got, machine)
		}
		return
	}
	assets := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	err := RealNodeMissing(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "kubelet") || !strings.Contains(err.Error(), "make node-bin") {
		t.Fatalf("without the node's binaries: %v", err)
	}
	for _, f := range NodeAssets {
		p := filepath.Join(assets, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	err = RealNodeMissing(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "pause") || !strings.Contains(err.Error(), "make images BASE_IMAGE=local") {
		t.Fatalf("without the images: %v", err)
	}
}
