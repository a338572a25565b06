/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package runtimes

import (
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// EngineMetrics is where a runtime reports its load, as the Gateway API Inference Extension's
// model-server protocol names it: the gauges of requests waiting in its queue, running in its
// batch, and its KV cache's use (0 to 1). Every runtime here serves them on its API port.
type EngineMetrics struct {
	Path string
	// Waiting and Running are gauges of requests; Running is the runtime's InFlightMetric (the
	// one the rollout gate reads), so the two cannot disagree.
	Waiting, Running string
	// KVCache is empty when the runtime exports no KV-cache gauge the operator knows (TGI).
	KVCache string
}

// engineWaiting and engineKVCache are the names besides InFlightMetric, by runtime:
//   - vLLM: vllm:num_requests_waiting, vllm:kv_cache_usage_perc (a fraction despite its name;
//     vllm:gpu_cache_usage_perc before v0.10);
//   - SGLang (--enable-metrics): sglang:num_queue_reqs, sglang:token_usage;
//   - TGI: tgi_queue_size, and no KV-cache gauge;
//   - llama.cpp's server (--metrics): llamacpp:requests_deferred, llamacpp:kv_cache_usage_ratio.
var (
	engineWaiting = map[inferencev1alpha1.Runtime]string{
		inferencev1alpha1.RuntimeVLLM:     "vllm:num_requests_waiting",
		inferencev1alpha1.RuntimeSGLang:   "sglang:num_queue_reqs",
		inferencev1alpha1.RuntimeTGI:      "tgi_queue_size",
		inferencev1alpha1.RuntimeLlamaCPP: "llamacpp:requests_deferred",
	}
	engineKVCache = map[inferencev1alpha1.Runtime]string{
		inferencev1alpha1.RuntimeVLLM:     "vllm:kv_cache_usage_perc",
		inferencev1alpha1.RuntimeSGLang:   "sglang:token_usage",
		inferencev1alpha1.RuntimeLlamaCPP: "llamacpp:kv_cache_usage_ratio",
	}
)

// EngineMetricsFor is where r reports its load; false for a runtime that reports none the
// operator knows (generic, PersonaPlex). An empty runtime is llamacpp, the API's default.
func EngineMetricsFor(r inferencev1alpha1.Runtime) (EngineMetrics, bool) {
	if r == "" {
		r = inferencev1alpha1.RuntimeLlamaCPP
	}
	waiting, ok := engineWaiting[r]
	if !ok {
		return EngineMetrics{}, false
	}
	return EngineMetrics{Path: "/metrics", Waiting: waiting, Running: For(r).InFlightMetric, KVCache: engineKVCache[r]}, true
}
