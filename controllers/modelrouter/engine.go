/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/runtimes"
)

// What EngineAware balancing reads and how it weighs it, when the router does not say. Each is
// chosen from `make bench-balancing` (docs/benchmarks/balancing.md says which run and why).
var defaultEngineScoring = routingv1.EngineScoring{
	// A read costs about 25 µs of proxy CPU for a vLLM-sized page (BenchmarkRead in
	// internal/routerproxy/engine): 10 reads per pod per second are 0.025 % of a core per pod, and
	// keep the engine's figures at most 100 ms old, the time of a few decode steps.
	Interval: "100ms",
	// A read ends before the next one starts.
	Timeout: "80ms",
	// Three missed reads, and the pod is scored blind.
	StaleAfter: "300ms",
	// A page is streamed (only the lines of the names are held); this bounds the bytes scanned.
	MaxBodyBytes: 4 << 20,
	// Prefix 4, not 2: at 2 the queue term outweighed a conversation's match on the pod that had
	// its earlier turns, and conversations through 4 replicas by session had p99 46 ms against the
	// prefix scorer's 40 (docs/benchmarks/balancing.md; 40 ms at 4, the other rows within their
	// spread or better).
	Weights: routingv1.EngineWeights{Queue: 3, KVCache: 1, InFlight: 1, Prefix: 4},
	// A prompt of 64 blocks (8 KiB of text, about 2k tokens) or more that the pod does not hold is
	// not sent to a pod whose KV cache is 90 % full, while another can take it.
	KVCacheFullPercent: 90,
	LongPromptBlocks:   64,
}

// DefaultEngineScoring is the engine section of a router that sets no weights (the benchmark
// runs with it, so that it measures what the operator writes).
func DefaultEngineScoring() routingv1.EngineScoring { return defaultEngineScoring }

// EngineScoring is the routing document's engine section for router: set exactly when
// spec.proxy.balancing is EngineAware, with the router's weights over the defaults.
func EngineScoring(router *inferencev1alpha1.ModelRouter) *routingv1.EngineScoring {
	p := router.Spec.Proxy
	if p == nil || ptr.Deref(p.Balancing, "") != inferencev1alpha1.BalancingEngineAware {
		return nil
	}
	e := defaultEngineScoring
	if s := p.EngineScoring; s != nil {
		e.Weights.Queue = ptr.Deref(s.QueueWeight, e.Weights.Queue)
		e.Weights.KVCache = ptr.Deref(s.KVCacheWeight, e.Weights.KVCache)
		e.Weights.InFlight = ptr.Deref(s.InFlightWeight, e.Weights.InFlight)
		e.Weights.Prefix = ptr.Deref(s.PrefixWeight, e.Weights.Prefix)
	}
	return &e
}

// EngineMetrics is where isvc's pods report their load, for an EngineAware router; nil for other
// policies and for a runtime that reports none the operator knows (its pods are scored blind).
// The names come from controllers/runtimes, the operator's one place of per-runtime knowledge.
func EngineMetrics(router *inferencev1alpha1.ModelRouter, isvc *inferencev1alpha1.InferenceService) *routingv1.EngineMetrics {
	if EngineScoring(router) == nil {
		return nil
	}
	m, ok := runtimes.EngineMetricsFor(isvc.Spec.Runtime)
	if !ok {
		return nil
	}
	return &routingv1.EngineMetrics{Path: m.Path, Waiting: m.Waiting, Running: m.Running, KVCache: m.KVCache}
}
