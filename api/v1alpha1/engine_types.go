/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

// BalancingEngineAware scores each ready pod on what its model server reports (requests waiting
// and running, KV-cache use), the proxy's own requests in flight to it, and how much of the
// prompt's start it was sent (docs/router-balancing.md, E1-E9).
const BalancingEngineAware BalancingPolicy = "EngineAware"

// EngineScoring weighs the terms of EngineAware balancing. Each weight is relative to the others;
// 0 turns its term off. An unset weight takes the default the benchmark chose
// (docs/benchmarks/balancing.md).
// +kubebuilder:validation:XValidation:rule="!(has(self.queueWeight) && has(self.kvCacheWeight) && has(self.inFlightWeight) && has(self.prefixWeight)) || self.queueWeight + self.kvCacheWeight + self.inFlightWeight + self.prefixWeight > 0",message="spec.proxy.engineScoring: at least one of queueWeight, kvCacheWeight, inFlightWeight and prefixWeight must be above 0"
type EngineScoring struct {
	// queueWeight weighs the requests waiting and running in the pod's engine, relative to the busiest pod (load from every router replica and every other client), and the prompt blocks this router replica sent the pod and has had no first token for (an engine's queue counts requests, not their prefill). 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	QueueWeight *int32 `json:"queueWeight,omitempty"`

	// kvCacheWeight weighs how full the pod's KV cache is (0 to 1). 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	KVCacheWeight *int32 `json:"kvCacheWeight,omitempty"`

	// inFlightWeight weighs this proxy replica's own requests in flight to the pod, relative to its busiest pod. 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	InFlightWeight *int32 `json:"inFlightWeight,omitempty"`

	// prefixWeight weighs the share of the prompt's blocks, from its start, that this proxy replica sent the pod before (likely in its prefix cache). 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	PrefixWeight *int32 `json:"prefixWeight,omitempty"`
}
