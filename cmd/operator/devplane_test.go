/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The release build (-tags nodevplane, as `make images` builds it) links neither the embedded
// control plane nor envtest: a cluster's operator carries no kube-apiserver launcher.
func TestReleaseBuildLinksNoDevControlPlane(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "nodevplane", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasSuffix(pkg, "/internal/devcluster") || strings.Contains(pkg, "controller-runtime/pkg/envtest") {
			t.Errorf("the release build of cmd/operator links %s", pkg)
		}
	}
}
