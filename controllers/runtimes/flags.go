/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package runtimes

import (
	"cmp"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// Hardware is what a runtime pod gets that its flags depend on: the GPUs of one pod and how
// llama.cpp spreads the model over them (a Model's spec.hardware.gpu).
type Hardware struct {
	// GPUs is the GPU count of one pod.
	GPUs int32
	// Layers is hardware.gpu.layers: the layers llama.cpp offloads; 0 or -1 means all of them.
	Layers int32
	// Sharding is hardware.gpu.sharding.
	Sharding *inferencev1alpha1.GPUSharding
}

// Override is a field whose flag the InferenceService's extraArgs (or args) already set: the
// operator leaves its own flag out, so the runtime reads the user's value only (as LLMKube's
// operator does, where extraArgs come last and win).
type Override struct {
	// Field is the spec path, such as spec.contextSize.
	Field string
	// Flag is the flag extraArgs sets.
	Flag string
}

// flags builds a runtime's arguments. A flag the user's own arguments set is never added a
// second time: the derived one is dropped and the pair recorded as an Override.
type flags struct {
	out      []string
	user     []string
	override []Override
	// hostField is spec.bindAddress when it is set: the field behind the listen address.
	hostField string
}

// userSets says whether the user's arguments name one of names, alone (--flag value) or
// inline (--flag=value).
func (f *flags) userSets(names ...string) bool {
	for _, a := range f.user {
		for _, n := range names {
			if a == n || strings.HasPrefix(a, n+"=") {
				return true
			}
		}
	}
	return false
}

// add appends flag and its values, unless the user's arguments set flag (or one of its
// aliases); field is the spec path it comes from ("" for a flag the operator always sets).
func (f *flags) add(field string, flag []string, values ...string) {
	if f.userSets(flag...) {
		if field != "" {
			f.override = append(f.override, Override{Field: field, Flag: flag[0]})
		}
		return
	}
	f.out = append(f.out, flag[0])
	f.out = append(f.out, values...)
}

// names is a flag with its aliases, first the one the operator writes.
func names(n ...string) []string { return n }

func i32(v int32) string { return strconv.Itoa(int(v)) }

// bindAddress is where the server listens: spec.bindAddress, else every address of both
// families (::), so that the pod serves on IPv6 and dual-stack clusters as on IPv4 ones.
func bindAddress(spec *inferencev1alpha1.InferenceServiceSpec) string {
	if spec.BindAddress != "" {
		return spec.BindAddress
	}
	return "::"
}

// llamaCPPFlags are llama.cpp's flags of LLMKube's fields, in the order LLMKube's operator writes
// them.
func llamaCPPFlags(f *flags, spec *inferencev1alpha1.InferenceServiceSpec, hw Hardware) {
	if hw.GPUs > 0 {
		layers := hw.Layers
		if layers <= 0 {
			layers = 99 // more than any model has: all of them
		}
		f.add("", names("--n-gpu-layers", "-ngl", "--gpu-layers"), i32(layers))
		if hw.GPUs > 1 {
			mode := splitMode(hw.Sharding)
			f.add("", names("--split-mode", "-sm"), mode)
			if mode != "none" {
				f.add("", names("--tensor-split", "-ts"), tensorSplit(hw.GPUs, hw.Sharding))
			}
		}
	}
	if v := spec.ContextSize; v != nil && *v > 0 {
		f.add("spec.contextSize", names("--ctx-size", "-c"), i32(*v))
	}
	if r := spec.RopeScaling; r != nil && r.Type != "" {
		f.add("spec.ropeScaling.type", names("--rope-scaling"), r.Type)
		if r.Factor != "" {
			f.add("spec.ropeScaling.factor", names("--rope-scale"), r.Factor)
		}
		if v := r.OriginalContext; v != nil && *v > 0 {
			f.add("spec.ropeScaling.originalContext", names("--yarn-orig-ctx"), i32(*v))
		}
	}
	if v := spec.ParallelSlots; v != nil && *v >= 1 {
		f.add("spec.parallelSlots", names("--parallel", "-np"), i32(*v))
	}
	// Flash attention is a GPU kernel: on a CPU pod LLMKube leaves it out, and so does this.
	if hw.GPUs > 0 && ptr.Deref(spec.FlashAttention, false) {
		f.add("spec.flashAttention", names("--flash-attn", "-fa"), "on")
	}
	if ptr.Deref(spec.Jinja, false) {
		f.add("spec.jinja", names("--jinja"))
	}
	if k := cmp.Or(spec.CacheTypeCustomK, spec.CacheTypeK); k != "" {
		f.add(cacheField("K", spec.CacheTypeCustomK), names("--cache-type-k", "-ctk"), k)
	}
	if v := cmp.Or(spec.CacheTypeCustomV, spec.CacheTypeV); v != "" {
		f.add(cacheField("V", spec.CacheTypeCustomV), names("--cache-type-v", "-ctv"), v)
	}
	if ptr.Deref(spec.MoeCPUOffload, false) {
		f.add("spec.moeCPUOffload", names("--cpu-moe", "-cmoe"))
	}
	if v := spec.MoeCPULayers; v != nil && *v > 0 {
		f.add("spec.moeCPULayers", names("--n-cpu-moe", "-ncmoe"), i32(*v))
	}
	if ptr.Deref(spec.NoKvOffload, false) {
		f.add("spec.noKvOffload", names("--no-kv-offload", "-nkvo"))
	}
	for _, o := range spec.TensorOverrides {
		f.out = append(f.out, "--override-tensor", o)
	}
	if v := spec.BatchSize; v != nil && *v > 0 {
		f.add("spec.batchSize", names("--batch-size", "-b"), i32(*v))
	}
	if v := spec.UBatchSize; v != nil && *v > 0 {
		f.add("spec.uBatchSize", names("--ubatch-size", "-ub"), i32(*v))
	}
	if ptr.Deref(spec.NoWarmup, false) {
		f.add("spec.noWarmup", names("--no-warmup"))
	}
	if v := spec.ReasoningBudget; v != nil {
		f.add("spec.reasoningBudget", names("--reasoning-budget"), i32(*v))
		if spec.ReasoningBudgetMessage != "" {
			f.add("spec.reasoningBudgetMessage", names("--reasoning-budget-message"), spec.ReasoningBudgetMessage)
		}
	}
	for _, o := range spec.MetadataOverrides {
		f.out = append(f.out, "--override-kv", o)
	}
	switch spec.Mode {
	case "rerank":
		f.add("spec.mode", names("--reranking", "--rerank"))
		f.add("spec.mode", names("--embedding", "--embeddings"))
		f.add("spec.mode", names("--pooling"), "rank")
		f.add("spec.mode", names("--cache-ram", "-cram"), "0")
	case "embedding":
		f.add("spec.mode", names("--embedding", "--embeddings"))
		f.add("spec.mode", names("--pooling"), "last")
		f.add("spec.mode", names("--cache-ram", "-cram"), "0")
	}
}

// cacheField is the field a KV cache type comes from: the custom one wins.
func cacheField(kv, custom string) string {
	if custom != "" {
		return "spec.cacheTypeCustom" + kv
	}
	return "spec.cacheType" + kv
}

// splitMode is llama.cpp's --split-mode of a sharding strategy; tensor and pipeline are LLMKube's
// names of row and layer.
func splitMode(s *inferencev1alpha1.GPUSharding) string {
	if s == nil {
		return "layer"
	}
	switch s.Strategy {
	case "row", "tensor":
		return "row"
	case "none":
		return "none"
	}
	return "layer"
}

// tensorSplit is --tensor-split: the layer ranges of sharding.layerSplit ("0-19") reduced to their
// smallest ratio when there is one per GPU and all parse, else even shares.
func tensorSplit(gpus int32, s *inferencev1alpha1.GPUSharding) string {
	if s != nil && len(s.LayerSplit) == int(gpus) {
		counts := make([]int, 0, gpus)
		for _, r := range s.LayerSplit {
			lo, hi, ok := layerRange(r)
			if !ok {
				counts = nil
				break
			}
			counts = append(counts, hi-lo+1)
		}
		if counts != nil {
			g := counts[0]
			for _, c := range counts[1:] {
				g = gcd(g, c)
			}
			parts := make([]string, len(counts))
			for i, c := range counts {
				parts[i] = strconv.Itoa(c / g)
			}
			return strings.Join(parts, ",")
		}
	}
	return strings.TrimSuffix(strings.Repeat("1,", int(gpus)), ",")
}

func layerRange(s string) (lo, hi int, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 0 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// vllmFlags are vLLM's flags of spec.vllmConfig and spec.parallelSlots; with several GPUs and no
// tensorParallelSize, the model is split across all of them. Memory flags need a GPU: on a CPU
// pod they are left out, as LLMKube's operator does.
func vllmFlags(f *flags, spec *inferencev1alpha1.InferenceServiceSpec, hw Hardware) {
	c := spec.VLLMConfig
	if c == nil {
		c = &inferencev1alpha1.VLLMConfig{}
	}
	const field = "spec.vllmConfig."
	tp := hw.GPUs
	if c.TensorParallelSize != nil {
		tp = *c.TensorParallelSize
	}
	if tp > 1 {
		f.add(field+"tensorParallelSize", names("--tensor-parallel-size", "-tp"), i32(tp))
	}
	if c.MaxModelLen != nil {
		f.add(field+"maxModelLen", names("--max-model-len"), i32(*c.MaxModelLen))
	}
	if c.Quantization != "" {
		f.add(field+"quantization", names("--quantization", "-q"), c.Quantization)
	}
	if c.Dtype != "" {
		f.add(field+"dtype", names("--dtype"), c.Dtype)
	}
	kv := cmp.Or(c.KVCacheCustomDtype, ptr.Deref(c.KVCacheDtype, ""))
	if kv != "" && kv != "auto" {
		f.add(field+"kvCacheDtype", names("--kv-cache-dtype"), kv)
	}
	if ptr.Deref(c.EnablePrefixCaching, false) {
		f.add(field+"enablePrefixCaching", names("--enable-prefix-caching"))
	}
	if ptr.Deref(c.EnableChunkedPrefill, false) {
		f.add(field+"enableChunkedPrefill", names("--enable-chunked-prefill"))
	}
	if c.MaxNumBatchedTokens != nil {
		f.add(field+"maxNumBatchedTokens", names("--max-num-batched-tokens"), i32(*c.MaxNumBatchedTokens))
	}
	if c.AttentionBackend != "" {
		f.add(field+"attentionBackend", names("--attention-backend"), c.AttentionBackend)
	}
	if s := c.Speculative; s != nil && ptr.Deref(s.Enabled, false) && s.Model != "" {
		f.add(field+"speculative.model", names("--speculative-model"), s.Model)
		if s.NumSpeculativeTokens != nil {
			f.add(field+"speculative.numSpeculativeTokens", names("--num-speculative-tokens"), i32(*s.NumSpeculativeTokens))
		}
	}
	if ptr.Deref(c.EnableExpertParallel, false) {
		f.add(field+"enableExpertParallel", names("--enable-expert-parallel"))
	}
	if hw.GPUs > 0 && c.CPUOffloadGB != nil {
		f.add(field+"cpuOffloadGB", names("--cpu-offload-gb"), i32(*c.CPUOffloadGB))
	}
	if hw.GPUs > 0 && c.GPUMemoryUtilization != nil {
		f.add(field+"gpuMemoryUtilization", names("--gpu-memory-utilization"), strconv.FormatFloat(*c.GPUMemoryUtilization, 'f', -1, 64))
	}
	if v := spec.ParallelSlots; v != nil && *v >= 1 {
		f.add("spec.parallelSlots", names("--max-num-seqs"), i32(*v))
	}
}

// tgiFlags are TGI's flags of spec.tgiConfig; with several GPUs, one shard per GPU.
func tgiFlags(f *flags, spec *inferencev1alpha1.InferenceServiceSpec, hw Hardware) {
	const field = "spec.tgiConfig."
	if c := spec.TGIConfig; c != nil {
		if c.Quantize != "" {
			f.add(field+"quantize", names("--quantize"), c.Quantize)
		}
		if c.MaxInputLength != nil {
			f.add(field+"maxInputLength", names("--max-input-length"), i32(*c.MaxInputLength))
		}
		if c.MaxTotalTokens != nil {
			f.add(field+"maxTotalTokens", names("--max-total-tokens"), i32(*c.MaxTotalTokens))
		}
		if c.Dtype != "" {
			f.add(field+"dtype", names("--dtype"), c.Dtype)
		}
	}
	if hw.GPUs > 1 {
		f.add("", names("--num-shard"), i32(hw.GPUs))
	}
}

// sglangFlags: with several GPUs, SGLang splits the model across all of them (spec.sglangConfig
// is not served; see the plan's unserved fields).
func sglangFlags(f *flags, _ *inferencev1alpha1.InferenceServiceSpec, hw Hardware) {
	if hw.GPUs > 1 {
		f.add("", names("--tp", "--tp-size", "--tensor-parallel-size"), i32(hw.GPUs))
	}
}
