/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package helmtool runs the helm CLI pinned in hack/tools/go.mod (`go tool -modfile=... helm`)
// for the chart tests, and splits what it renders into objects.
//
// Note: the tests shell out instead of importing helm's Go packages so that helm's dependency
// graph stays out of the operator's go.mod, and so that they run the same helm as `make helm-lint`
// and a user's `helm install`.
package helmtool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	goruntime "runtime"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// RepoRoot is the repository's top folder.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Chart is the chart's folder.
func Chart() string { return filepath.Join(RepoRoot(), "charts", "llmkube") }

// Command is helm with args, run from the repository root.
func Command(args ...string) *exec.Cmd {
	cmd := exec.Command("go", append([]string{"tool", "-modfile=hack/tools/go.mod", "helm"}, args...)...)
	cmd.Dir = RepoRoot()
	return cmd
}

// Run runs helm and returns its standard output, or an error holding its standard error.
func Run(args ...string) ([]byte, error) {
	cmd := Command(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %v: %w\n%s", args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// Template renders the chart as release "llmkube" in namespace with extra helm arguments
// (-f FILE, --set K=V) and returns the objects, CRDs included.
func Template(namespace string, extra ...string) ([]*unstructured.Unstructured, error) {
	args := append([]string{"template", "llmkube", Chart(), "--namespace", namespace, "--include-crds"}, extra...)
	out, err := Run(args...)
	if err != nil {
		return nil, err
	}
	return Split(out)
}

// Split decodes a multi-document YAML stream into objects, skipping empty documents.
func Split(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// Find returns the first object of kind (and name, when not empty).
func Find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o
		}
	}
	return nil
}
