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

// The flags LLMKube's operator derives from its fields, as its v0.9.19 controllers write them
// (internal/controller/runtime_*.go there), after the arguments that load the model and listen.
func TestLLMKubeFlags(t *testing.T) {
	type spec = inferencev1alpha1.InferenceServiceSpec
	llama := func(f func(*spec)) spec {
		s := spec{Model: inferencev1alpha1.ModelSpec{Source: "/m.gguf"}}
		f(&s)
		return s
	}
	base := []string{"--host", "::", "--port", "8080", "--metrics", "--model", "/m.gguf"}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }
	vllmBase := []string{"--model", "org/m", "--host", "::", "--port", "8000"}
	vllm := func(f func(*spec)) spec {
		s := spec{Runtime: "vllm", Model: inferencev1alpha1.ModelSpec{Source: "org/m"}}
		f(&s)
		return s
	}
	cases := []struct {
		name     string
		spec     spec
		hw       Hardware
		want     []string
		override []Override
	}{
		{"one GPU offloads every layer; context, flash attention, jinja",
			llama(func(s *spec) {
				s.ContextSize, s.FlashAttention, s.Jinja = ptr.To[int32](8192), ptr.To(true), ptr.To(true)
			}),
			Hardware{GPUs: 1},
			with(base, "--n-gpu-layers", "99", "--ctx-size", "8192", "--flash-attn", "on", "--jinja"), nil},
		{"flash attention needs a GPU",
			llama(func(s *spec) { s.FlashAttention = ptr.To(true) }), Hardware{}, base, nil},
		{"two GPUs: layers, split mode and even shares",
			llama(func(*spec) {}), Hardware{GPUs: 2, Layers: 40, Sharding: &inferencev1alpha1.GPUSharding{Strategy: "tensor"}},
			with(base, "--n-gpu-layers", "40", "--split-mode", "row", "--tensor-split", "1,1"), nil},
		{"layer ranges become the smallest ratio",
			llama(func(*spec) {}), Hardware{GPUs: 3, Sharding: &inferencev1alpha1.GPUSharding{LayerSplit: []string{"0-19", "20-39", "40-79"}}},
			with(base, "--n-gpu-layers", "99", "--split-mode", "layer", "--tensor-split", "1,1,2"), nil},
		{"split mode none has no tensor split",
			llama(func(*spec) {}), Hardware{GPUs: 2, Sharding: &inferencev1alpha1.GPUSharding{Strategy: "none"}},
			with(base, "--n-gpu-layers", "99", "--split-mode", "none"), nil},
		{"a custom cache type wins; MoE, KV and batch flags",
			llama(func(s *spec) {
				s.CacheTypeK, s.CacheTypeCustomK, s.CacheTypeV = "q8_0", "turbo3", "q4_0"
				s.MoeCPUOffload, s.MoeCPULayers, s.NoKvOffload = ptr.To(true), ptr.To[int32](12), ptr.To(true)
				s.BatchSize, s.UBatchSize, s.NoWarmup = ptr.To[int32](2048), ptr.To[int32](512), ptr.To(true)
				s.TensorOverrides, s.MetadataOverrides = []string{"exps=CPU"}, []string{"a=int:1"}
				s.ParallelSlots = ptr.To[int32](4)
				s.RopeScaling = &inferencev1alpha1.RopeScalingSpec{Type: "yarn", Factor: "4.0", OriginalContext: ptr.To[int32](32768)}
				s.ReasoningBudget, s.ReasoningBudgetMessage = ptr.To[int32](0), "stop"
			}), Hardware{},
			with(base, "--rope-scaling", "yarn", "--rope-scale", "4.0", "--yarn-orig-ctx", "32768", "--parallel", "4",
				"--cache-type-k", "turbo3", "--cache-type-v", "q4_0", "--cpu-moe", "--n-cpu-moe", "12", "--no-kv-offload",
				"--override-tensor", "exps=CPU", "--batch-size", "2048", "--ubatch-size", "512", "--no-warmup",
				"--reasoning-budget", "0", "--reasoning-budget-message", "stop", "--override-kv", "a=int:1"), nil},
		{"rerank mode",
			llama(func(s *spec) { s.Mode = "rerank" }), Hardware{},
			with(base, "--reranking", "--embedding", "--pooling", "rank", "--cache-ram", "0"), nil},
		{"extraArgs win over a field and over the listen address, each flag once",
			llama(func(s *spec) {
				s.ContextSize, s.ParallelSlots = ptr.To[int32](8192), ptr.To[int32](2)
				s.ExtraArgs = []string{"--ctx-size=4096", "-np", "8", "--host", "0.0.0.0", "--metrics"}
			}), Hardware{},
			[]string{"--port", "8080", "--model", "/m.gguf", "--ctx-size=4096", "-np", "8", "--host", "0.0.0.0", "--metrics"},
			[]Override{{"spec.contextSize", "--ctx-size"}, {"spec.parallelSlots", "--parallel"}}},
		{"bindAddress",
			llama(func(s *spec) { s.BindAddress = "0.0.0.0" }), Hardware{},
			[]string{"--host", "0.0.0.0", "--port", "8080", "--metrics", "--model", "/m.gguf"}, nil},
		{"vLLM: tensor parallel over the pod's GPUs",
			vllm(func(*spec) {}), Hardware{GPUs: 2}, with(vllmBase, "--tensor-parallel-size", "2"), nil},
		{"vLLM: an explicit tensorParallelSize wins; config flags; auto KV dtype is left out",
			vllm(func(s *spec) {
				s.VLLMConfig = &inferencev1alpha1.VLLMConfig{TensorParallelSize: ptr.To[int32](1), MaxModelLen: ptr.To[int32](32768),
					Quantization: "fp8", Dtype: "bfloat16", KVCacheDtype: ptr.To("auto"), EnablePrefixCaching: ptr.To(true),
					EnableChunkedPrefill: ptr.To(true), MaxNumBatchedTokens: ptr.To[int32](8192), GPUMemoryUtilization: ptr.To(0.9),
					CPUOffloadGB: ptr.To[int32](16)}
				s.ParallelSlots = ptr.To[int32](8)
			}), Hardware{GPUs: 2},
			with(vllmBase, "--max-model-len", "32768", "--quantization", "fp8", "--dtype", "bfloat16", "--enable-prefix-caching",
				"--enable-chunked-prefill", "--max-num-batched-tokens", "8192", "--cpu-offload-gb", "16",
				"--gpu-memory-utilization", "0.9", "--max-num-seqs", "8"), nil},
		{"vLLM: GPU memory flags need a GPU",
			vllm(func(s *spec) {
				s.VLLMConfig = &inferencev1alpha1.VLLMConfig{GPUMemoryUtilization: ptr.To(0.9), CPUOffloadGB: ptr.To[int32](4), KVCacheCustomDtype: "fp8_e5m2"}
			}), Hardware{},
			with(vllmBase, "--kv-cache-dtype", "fp8_e5m2"), nil},
		{"TGI: one shard per GPU",
			func() spec {
				s := spec{Runtime: "tgi", Model: inferencev1alpha1.ModelSpec{Source: "org/m"}}
				s.TGIConfig = &inferencev1alpha1.TGIConfig{Quantize: "awq", MaxTotalTokens: ptr.To[int32](4096)}
				return s
			}(),
			Hardware{GPUs: 4},
			[]string{"--model-id", "org/m", "--hostname", "::", "--port", "80", "--quantize", "awq", "--max-total-tokens", "4096", "--num-shard", "4"}, nil},
		{"SGLang: tensor parallel over the pod's GPUs",
			spec{Runtime: "sglang", Model: inferencev1alpha1.ModelSpec{Source: "org/m"}}, Hardware{GPUs: 2},
			[]string{"--model-path", "org/m", "--host", "::", "--port", "30000", "--enable-metrics", "--tp", "2"}, nil},
	}
	for _, c := range cases {
		got, override := For(c.spec.Runtime).Args(&c.spec, ResolvedPort(&c.spec), c.hw)
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s: args (-want +got):\n%s", c.name, d)
		}
		if d := cmp.Diff(c.override, override); d != "" {
			t.Errorf("%s: overrides (-want +got):\n%s", c.name, d)
		}
	}
}
