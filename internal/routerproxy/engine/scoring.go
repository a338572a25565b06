/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package engine

import (
	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// Scoring is the routing document's engine section as the scorer takes it (weights as numbers,
// the KV bound as a fraction, the staleness as a duration).
func Scoring(e *routingv1.EngineScoring) *balance.EngineScoring {
	_, _, stale := e.Durations()
	w := e.Weights
	return &balance.EngineScoring{
		Queue: float64(w.Queue), KVCache: float64(w.KVCache), InFlight: float64(w.InFlight), Prefix: float64(w.Prefix),
		KVFull: float64(e.KVCacheFullPercent) / 100, LongPrompt: int(e.LongPromptBlocks), StaleAfter: stale,
	}
}
