/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package plugin

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kubectl's -o forms a command has no meaning for are refused, never ignored, and the message
// says what the command prints instead.
func TestCheckFormatRefusesWhatTheCommandDoesNotPrint(t *testing.T) {
	for _, ok := range []string{Table, JSON, Name} {
		if err := CheckFormat("owners", ok, JSON, YAML, Name); err != nil {
			t.Errorf("-o %q refused: %v", ok, err)
		}
	}
	err := CheckFormat("owners", Wide, JSON, YAML, Name)
	if err == nil || !strings.Contains(err.Error(), "-o wide is not supported by owners: it has nothing wider than its default output; use -o json, -o yaml, -o name, or no -o") {
		t.Errorf("-o wide: %v", err)
	}
	if err := CheckFormat("migration plan", Name, JSON, YAML); err == nil || !strings.Contains(err.Error(), "-o name is not supported by migration plan") {
		t.Errorf("-o name: %v", err)
	}
	if err := CheckFormat("diff", "jsonpath={.x}", JSON); err == nil {
		t.Error("-o jsonpath accepted")
	}
}

// -o name prints what kubectl's own -o name prints for the same object.
func TestObjectNameIsKubectls(t *testing.T) {
	for gk, want := range map[schema.GroupKind]string{
		{Group: "apps", Kind: "Deployment"}:                     "deployment.apps/x",
		{Kind: "Service"}:                                       "service/x",
		{Group: "inference.llmkube.dev", Kind: "ModelRouter"}:   "modelrouter.inference.llmkube.dev/x",
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: "horizontalpodautoscaler.autoscaling/x",
	} {
		if got := ObjectName(gk, "x"); got != want {
			t.Errorf("ObjectName(%v) = %q, want %q", gk, got, want)
		}
	}
}
