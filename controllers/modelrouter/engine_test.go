/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"testing"

	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// The engine section exists only for EngineAware, takes the router's weights over the
// defaults, and names each runtime's own gauges; a runtime without known gauges gets none.
// Proves E5.
func TestEngineSectionComesFromThePolicyAndTheRuntime(t *testing.T) {
	router := func(p *inferencev1alpha1.ProxySpec) *inferencev1alpha1.ModelRouter {
		return &inferencev1alpha1.ModelRouter{Spec: inferencev1alpha1.ModelRouterSpec{Proxy: p}}
	}
	isvc := func(rt inferencev1alpha1.Runtime) *inferencev1alpha1.InferenceService {
		return &inferencev1alpha1.InferenceService{Spec: inferencev1alpha1.InferenceServiceSpec{Runtime: rt}}
	}
	for _, p := range []*inferencev1alpha1.ProxySpec{nil, {}, {Balancing: ptr.To(inferencev1alpha1.BalancingPrefixAffinity)}} {
		if e, m := EngineScoring(router(p)), EngineMetrics(router(p), isvc(inferencev1alpha1.RuntimeVLLM)); e != nil || m != nil {
			t.Fatalf("proxy %+v: engine %+v, metrics %+v, want neither", p, e, m)
		}
	}
	aware := router(&inferencev1alpha1.ProxySpec{Balancing: ptr.To(inferencev1alpha1.BalancingEngineAware),
		EngineScoring: &inferencev1alpha1.EngineScoring{QueueWeight: ptr.To[int32](0), PrefixWeight: ptr.To[int32](9)}})
	e := EngineScoring(aware)
	if want := (routingv1.EngineWeights{Queue: 0, KVCache: defaultEngineScoring.Weights.KVCache, InFlight: defaultEngineScoring.Weights.InFlight, Prefix: 9}); e == nil || e.Weights != want {
		t.Fatalf("weights %+v, want %+v", e, want)
	}
	doc := routingv1.Document{Version: routingv1.Version, Balancing: routingv1.BalancingEngineAware, Engine: e,
		Backends: []routingv1.Backend{{Name: "b", Kind: routingv1.KindInferenceService, URL: "http://b", Metrics: EngineMetrics(aware, isvc(inferencev1alpha1.RuntimeSGLang))}}}
	if err := doc.Validate(); err != nil {
		t.Fatalf("the operator's own document does not validate: %v", err)
	}
	for rt, want := range map[inferencev1alpha1.Runtime]*routingv1.EngineMetrics{
		inferencev1alpha1.RuntimeVLLM:        {Path: "/metrics", Waiting: "vllm:num_requests_waiting", Running: "vllm:num_requests_running", KVCache: "vllm:kv_cache_usage_perc"},
		inferencev1alpha1.RuntimeSGLang:      {Path: "/metrics", Waiting: "sglang:num_queue_reqs", Running: "sglang:num_running_reqs", KVCache: "sglang:token_usage"},
		inferencev1alpha1.RuntimeTGI:         {Path: "/metrics", Waiting: "tgi_queue_size", Running: "tgi_batch_current_size"},
		"":                                   {Path: "/metrics", Waiting: "llamacpp:requests_deferred", Running: "llamacpp:requests_processing", KVCache: "llamacpp:kv_cache_usage_ratio"},
		inferencev1alpha1.RuntimeGeneric:     nil,
		inferencev1alpha1.RuntimePersonaPlex: nil,
	} {
		got := EngineMetrics(aware, isvc(rt))
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("runtime %q: %+v, want %+v", rt, got, want)
		}
	}
}
