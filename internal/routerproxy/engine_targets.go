/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/engine"
)

// engineState is what an EngineAware document says the scorer and the scraper use: the
// document's scoring, read into the scorer's terms, and each backend's metrics endpoint. All nil
// for other policies.
func engineState(doc *routingv1.Document) (*routingv1.EngineScoring, *balance.EngineScoring, map[string]*routingv1.EngineMetrics) {
	e := doc.Engine
	if doc.Balancing != routingv1.BalancingEngineAware || e == nil {
		return nil, nil, nil
	}
	metrics := map[string]*routingv1.EngineMetrics{}
	for _, b := range doc.Backends {
		if b.Metrics != nil {
			metrics[b.Name] = b.Metrics
		}
	}
	return e, engine.Scoring(e), metrics
}

// EngineTargets is what the engine scraper reads now (engine.Scraper.Targets): the document's
// scoring and each balanced backend's pool with its metrics endpoint; a nil scoring when the
// document is not EngineAware.
func (b *Balancer) EngineTargets() (*routingv1.EngineScoring, []engine.Target) {
	s := b.state.Load()
	if s.engine == nil {
		return nil, nil
	}
	out := make([]engine.Target, 0, len(s.pools))
	for name, p := range s.pools {
		out = append(out, engine.Target{Backend: name, Pool: p, Metrics: s.metrics[name]})
	}
	return s.engine, out
}
