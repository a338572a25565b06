/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package podmeta

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

func TestLabelsOperatorWins(t *testing.T) {
	got := Labels(map[string]string{"app": "foo", "inference.llmkube.dev/runtime": "vllm"},
		map[string]inferencev1alpha1.LabelValue{"inference.llmkube.dev/runtime": "mine", "team": "a"})
	want := map[string]string{"app": "foo", "inference.llmkube.dev/runtime": "vllm", "team": "a"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("labels (-want +got):\n%s", d)
	}
}

func TestAnnotationsUserWins(t *testing.T) {
	got := Annotations(map[string]string{"prometheus.io/port": "8080", "prometheus.io/scrape": "true"},
		map[string]string{"prometheus.io/port": "9090"})
	want := map[string]string{"prometheus.io/port": "9090", "prometheus.io/scrape": "true"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("annotations (-want +got):\n%s", d)
	}
}

func TestEmptyIsNil(t *testing.T) {
	if Labels(nil, nil) != nil || Annotations(nil, map[string]string{}) != nil {
		t.Fatal("an empty result must be nil so that an apply configuration claims no empty map")
	}
}

func TestAnnotationsPinnedWinsOverUser(t *testing.T) {
	got := AnnotationsPinned(map[string]string{"prometheus.io/port": "9090"},
		map[string]string{"example.com/hash": "real"},
		map[string]string{"example.com/hash": "spoofed", "prometheus.io/port": "1"})
	want := map[string]string{"example.com/hash": "real", "prometheus.io/port": "1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("annotations (-want +got):\n%s", d)
	}
	if AnnotationsPinned(nil, nil, nil) != nil {
		t.Fatal("an empty result must be nil")
	}
}
