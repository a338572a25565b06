/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package testenv starts the real control plane (kube-apiserver and etcd built by
// `make envtest-bin`) with the operator's CRDs installed, for the integration suite and benchmarks.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/llmkube/operator/controllers"
)

// RepoRoot is the repository's top folder, found from this file's place so tests can run from any
// package directory.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Scheme knows every kind the operator reads or writes, as the binary's does.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := controllers.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// New returns an environment with the CRDs from config/crd/bases. The caller starts and stops it.
//
// Note: it fails instead of skipping when the binaries are missing, so a CI run without a
// control plane can never pass by running nothing.
func New() (*envtest.Environment, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the suite with `make test`, which builds kube-apiserver and etcd from source (`make envtest-bin`) and points KUBEBUILDER_ASSETS at them")
	}
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("no kube-apiserver in KUBEBUILDER_ASSETS=%s: run `make envtest-bin`: %w", assets, err)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme(),
	}
	// The suite creates several hundred Services in one API server, and envtest's default /24
	// range ran out ("failed to allocate a serviceIP ... range is full"), failing every spec
	// that came after in the random order. The benchmark's plane sets the same range.
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	return env, nil
}

// GatewayCRDs are the CRD files of the kinds spec.gateway writes, as their modules ship them in the
// Go module cache at the versions go.mod requires: the HTTPRoute of sigs.k8s.io/gateway-api
// (standard channel) and the InferencePool of sigs.k8s.io/gateway-api-inference-extension.
func GatewayCRDs() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api", "sigs.k8s.io/gateway-api-inference-extension")
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("finding the Gateway API modules (go list -m): %w", err)
	}
	dirs := strings.Fields(string(out))
	if len(dirs) != 2 {
		return nil, fmt.Errorf("go list -m found %q, want the two Gateway API module folders", dirs)
	}
	files := []string{
		filepath.Join(dirs[0], "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml"),
		filepath.Join(dirs[1], "config", "crd", "bases", "inference.networking.k8s.io_inferencepools.yaml"),
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	return files, nil
}
