/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package runtimes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

func TestResolvedPort(t *testing.T) {
	cases := []struct {
		name string
		spec inferencev1alpha1.InferenceServiceSpec
		want int32
	}{
		{"llamacpp default", inferencev1alpha1.InferenceServiceSpec{Runtime: "llamacpp"}, 8080},
		{"empty runtime is llamacpp", inferencev1alpha1.InferenceServiceSpec{}, 8080},
		{"vllm default", inferencev1alpha1.InferenceServiceSpec{Runtime: "vllm"}, 8000},
		{"tgi default", inferencev1alpha1.InferenceServiceSpec{Runtime: "tgi"}, 80},
		{"sglang default", inferencev1alpha1.InferenceServiceSpec{Runtime: "sglang"}, 30000},
		{"personaplex default", inferencev1alpha1.InferenceServiceSpec{Runtime: "personaplex"}, 8998},
		{"generic default", inferencev1alpha1.InferenceServiceSpec{Runtime: "generic"}, 8080},
		{"endpoint.port", inferencev1alpha1.InferenceServiceSpec{Runtime: "vllm", Endpoint: &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}}, 9000},
		{"containerPort wins", inferencev1alpha1.InferenceServiceSpec{Runtime: "vllm", ContainerPort: ptr.To[int32](7000),
			Endpoint: &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}}, 7000},
	}
	for _, c := range cases {
		if got := ResolvedPort(&c.spec); got != c.want {
			t.Errorf("%s: ResolvedPort = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestArgs(t *testing.T) {
	cases := []struct {
		name string
		spec inferencev1alpha1.InferenceServiceSpec
		want []string
	}{
		{"llamacpp hf file", inferencev1alpha1.InferenceServiceSpec{Model: inferencev1alpha1.ModelSpec{Source: "hf://org/repo/m.gguf"}},
			[]string{"--host", "::", "--port", "8080", "--metrics", "--hf-repo", "org/repo", "--hf-file", "m.gguf"}},
		{"llamacpp url", inferencev1alpha1.InferenceServiceSpec{Model: inferencev1alpha1.ModelSpec{Source: "https://h/m.gguf"}},
			[]string{"--host", "::", "--port", "8080", "--metrics", "--model-url", "https://h/m.gguf"}},
		{"llamacpp path with extra args", inferencev1alpha1.InferenceServiceSpec{Model: inferencev1alpha1.ModelSpec{Source: "/models/m.gguf"}, ExtraArgs: []string{"-c", "4096"}},
			[]string{"--host", "::", "--port", "8080", "--metrics", "--model", "/models/m.gguf", "-c", "4096"}},
		{"vllm repo id", inferencev1alpha1.InferenceServiceSpec{Runtime: "vllm", Model: inferencev1alpha1.ModelSpec{Source: "hf://Qwen/Qwen2.5"}},
			[]string{"--model", "Qwen/Qwen2.5", "--host", "::", "--port", "8000"}},
		{"args replace", inferencev1alpha1.InferenceServiceSpec{Runtime: "tgi", Args: []string{"x"}, ExtraArgs: []string{"y"}}, []string{"x", "y"}},
		{"generic has none", inferencev1alpha1.InferenceServiceSpec{Runtime: "generic", Model: inferencev1alpha1.ModelSpec{Source: "a/b"}}, nil},
	}
	for _, c := range cases {
		got, _ := For(c.spec.Runtime).Args(&c.spec, ResolvedPort(&c.spec), Hardware{})
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}
