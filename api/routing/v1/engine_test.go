/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1

import (
	"strings"
	"testing"
)

// A document is EngineAware with its engine section or not at all, and the section's bounds
// are what the proxy relies on (a read ends before the next, a bounded page, a weight above 0).
// Proves E5.
func TestEngineSectionIsCheckedWhole(t *testing.T) {
	good := EngineScoring{Interval: "100ms", Timeout: "80ms", StaleAfter: "300ms", MaxBodyBytes: 1 << 20,
		Weights: EngineWeights{Queue: 1}, KVCacheFullPercent: 90, LongPromptBlocks: 64}
	doc := func(balancing string, e *EngineScoring, m *EngineMetrics) *Document {
		return &Document{Version: Version, Balancing: balancing, Engine: e,
			Backends: []Backend{{Name: "b", Kind: KindInferenceService, URL: "http://b", Metrics: m}}}
	}
	if err := doc(BalancingEngineAware, &good, &EngineMetrics{Path: "/metrics"}).Validate(); err != nil {
		t.Fatalf("a good document: %v", err)
	}
	bad := func(change func(*EngineScoring)) *EngineScoring { e := good; change(&e); return &e }
	for want, d := range map[string]*Document{
		"engine must be set exactly":           doc(BalancingEngineAware, nil, nil),
		"engine must be set exactly when":      doc(BalancingPrefixAffinity, &good, nil),
		"engine.timeout 200ms is longer":       doc(BalancingEngineAware, bad(func(e *EngineScoring) { e.Timeout = "200ms" }), nil),
		"engine.interval \"0s\"":               doc(BalancingEngineAware, bad(func(e *EngineScoring) { e.Interval = "0s" }), nil),
		"engine.maxBodyBytes must be positive": doc(BalancingEngineAware, bad(func(e *EngineScoring) { e.MaxBodyBytes = 0 }), nil),
		"engine.weights":                       doc(BalancingEngineAware, bad(func(e *EngineScoring) { e.Weights = EngineWeights{} }), nil),
		"engine.kvCacheFullPercent must be":    doc(BalancingEngineAware, bad(func(e *EngineScoring) { e.KVCacheFullPercent = 0 }), nil),
		"path starting with /":                 doc(BalancingEngineAware, &good, &EngineMetrics{Path: "metrics"}),
	} {
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error containing %q, got %v", want, err)
		}
	}
}
