/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package cluster

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A cluster without the CRDs answers a typed read with a RESTMapper miss; the message must say to
// install them. (The integration suite's API server always has them.)
func TestExplainMissingCRDs(t *testing.T) {
	err := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "inference.llmkube.dev", Kind: "InferenceService"}, SearchedVersions: []string{"v1alpha1"}}
	got := Explain(err, "reading InferenceService", "x", "default").Error()
	if !strings.Contains(got, "the llmkube CRDs are not installed on this cluster: install the operator") {
		t.Fatalf("message does not say to install the CRDs: %s", got)
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"isvc/a": {Kind: "InferenceService", Name: "a"}, "InferenceService/a": {Kind: "InferenceService", Name: "a"},
		"mr/r": {Kind: "ModelRouter", Name: "r"}, "modelrouters/r": {Kind: "ModelRouter", Name: "r"},
	} {
		if got, err := ParseTarget(in); err != nil || got != want {
			t.Fatalf("ParseTarget(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"a", "isvc/", "deploy/a"} {
		if _, err := ParseTarget(in); err == nil {
			t.Fatalf("ParseTarget(%q) accepted", in)
		}
	}
}

// kubectl's two forms name the same objects, and the caller's arguments are left as they were.
func TestParseTargetsBothForms(t *testing.T) {
	args := []string{"isvc", "a", "b"}
	got, err := ParseTargets(args)
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{{Kind: "InferenceService", Name: "a"}, {Kind: "InferenceService", Name: "b"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("TYPE NAME...: %v, want %v", got, want)
	}
	if args[1] != "a" {
		t.Fatalf("the arguments were changed: %v", args)
	}
	if got, err := ParseTargets([]string{"isvc/a", "mr/r"}); err != nil || len(got) != 2 || got[1] != (Target{Kind: "ModelRouter", Name: "r"}) {
		t.Fatalf("TYPE/NAME...: %v, %v", got, err)
	}
	if _, err := ParseTargets([]string{"isvc"}); err == nil {
		t.Fatal("a TYPE without NAME accepted")
	}
}
