/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"testing"

	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// Proves R21.
func TestStreamUsageAsksOnlyBackendsKnownToAcceptIt(t *testing.T) {
	isvc := func(rt inferencev1alpha1.Runtime) *inferencev1alpha1.InferenceService {
		return &inferencev1alpha1.InferenceService{Spec: inferencev1alpha1.InferenceServiceSpec{Runtime: rt}}
	}
	local := &inferencev1alpha1.Backend{Name: "local", InferenceServiceRef: &inferencev1alpha1.LocalObjectReference{Name: "m"}}
	for _, tc := range []struct {
		runtime inferencev1alpha1.Runtime
		want    bool
	}{
		{"", true}, // the API's default, llamacpp
		{inferencev1alpha1.RuntimeLlamaCPP, true},
		{inferencev1alpha1.RuntimeVLLM, true},
		{inferencev1alpha1.RuntimeSGLang, true},
		{inferencev1alpha1.RuntimeTGI, false},
		{inferencev1alpha1.RuntimePersonaPlex, false},
		{inferencev1alpha1.RuntimeGeneric, false},
	} {
		if got := StreamUsage(local, isvc(tc.runtime)); got != tc.want {
			t.Errorf("runtime %q: got %v, want %v", tc.runtime, got, tc.want)
		}
	}

	for _, tc := range []struct {
		provider, url string
		want          bool
	}{
		{"openai", "https://api.openai.com/v1", true},
		{"anthropic", "https://api.anthropic.com/v1", true},
		{"openai-compatible", "https://api.together.xyz/v1", false},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-02-01", false},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-06-01", false},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-08-01-preview", false},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-09-01-preview", true},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-10-21", true},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2025-04-01-preview", true},
		{"azure-openai", "https://x.openai.azure.com/openai/v1/", true},
		{"azure-openai", "https://x.openai.azure.com/openai/v1?api-version=preview", true},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt", false},
		{"azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=junk", false},
	} {
		b := &inferencev1alpha1.Backend{Name: "cloud", External: &inferencev1alpha1.ExternalBackend{Provider: tc.provider, URL: tc.url}}
		if got := StreamUsage(b, nil); got != tc.want {
			t.Errorf("%s %s: got %v, want %v", tc.provider, tc.url, got, tc.want)
		}
	}

	strict := &inferencev1alpha1.Backend{Name: "c", External: &inferencev1alpha1.ExternalBackend{Provider: "openai-compatible", URL: "http://x/v1"}}
	strict.StreamUsage = ptr.To(inferencev1alpha1.StreamUsageAlways)
	if !StreamUsage(strict, nil) {
		t.Error("Always: not asked")
	}
	vllm := local.DeepCopy()
	vllm.StreamUsage = ptr.To(inferencev1alpha1.StreamUsageNever)
	if StreamUsage(vllm, isvc(inferencev1alpha1.RuntimeVLLM)) {
		t.Error("Never: asked")
	}
	if StreamUsage(local, nil) {
		t.Error("an InferenceService not found: asked")
	}
}
