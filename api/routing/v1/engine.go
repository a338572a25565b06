/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1

import (
	"fmt"
	"time"
)

// BalancingEngineAware scores each ready pod on what its model server reports (requests waiting
// and running, KV-cache use), this proxy's requests in flight to it, and the prefix match of the
// request's prompt (docs/router-balancing.md, E1-E9).
const BalancingEngineAware = "EngineAware"

// EngineScoring is what the proxy needs to score pods on their engines' metrics: how often and
// how long it reads them, and the weights of the scorer. The operator decides every value
// (controllers/modelrouter); the proxy only obeys, so a document with Balancing EngineAware
// must carry it whole.
type EngineScoring struct {
	// Interval, a Go duration, is how often each pod's metrics endpoint is read.
	Interval string `json:"interval"`
	// Timeout, a Go duration at most Interval, bounds one read of one pod's metrics.
	Timeout string `json:"timeout"`
	// StaleAfter, a Go duration, is the age after which a pod's last read no longer counts: the
	// pod is then scored blind (from this proxy's own counts).
	StaleAfter string `json:"staleAfter"`
	// MaxBodyBytes bounds a metrics answer: a longer one is a failed read.
	MaxBodyBytes int64 `json:"maxBodyBytes"`
	// Weights of the scorer's terms, relative to one another (0 turns a term off).
	Weights EngineWeights `json:"weights"`
	// KVCacheFullPercent: a pod whose KV cache is at least this full is not given a prompt of
	// LongPromptBlocks or more blocks it does not hold, while another pod can take it.
	KVCacheFullPercent int32 `json:"kvCacheFullPercent"`
	LongPromptBlocks   int32 `json:"longPromptBlocks"`
}

// EngineWeights are the scorer's weights.
type EngineWeights struct {
	Queue    int32 `json:"queue"`
	KVCache  int32 `json:"kvCache"`
	InFlight int32 `json:"inFlight"`
	Prefix   int32 `json:"prefix"`
}

// EngineMetrics says where a backend's model server reports its load and under which names
// (Prometheus text format). A name left empty is a signal the runtime does not export.
type EngineMetrics struct {
	// Port is the pod's metrics port; 0 means the port requests go to (every runtime the operator
	// knows serves /metrics there).
	Port int32 `json:"port,omitempty"`
	// Path of the metrics endpoint, such as /metrics.
	Path string `json:"path"`
	// Waiting is the gauge of requests queued in the engine, Running of those in its batch.
	Waiting string `json:"waiting,omitempty"`
	Running string `json:"running,omitempty"`
	// KVCache is the gauge of the KV cache's use, 0 to 1.
	KVCache string `json:"kvCache,omitempty"`
}

// Durations are the scoring's Interval, Timeout and StaleAfter.
func (e *EngineScoring) Durations() (interval, timeout, stale time.Duration) {
	interval, _ = time.ParseDuration(e.Interval)
	timeout, _ = time.ParseDuration(e.Timeout)
	stale, _ = time.ParseDuration(e.StaleAfter)
	return interval, timeout, stale
}

// validate checks what the proxy relies on: positive durations, a timeout that ends before the
// next read, a bounded body, weights that are not all zero.
func (e *EngineScoring) validate() error {
	for name, v := range map[string]string{"interval": e.Interval, "timeout": e.Timeout, "staleAfter": e.StaleAfter} {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return fmt.Errorf("engine.%s %q is not a positive duration", name, v)
		}
	}
	if interval, timeout, _ := e.Durations(); timeout > interval {
		return fmt.Errorf("engine.timeout %s is longer than engine.interval %s", e.Timeout, e.Interval)
	}
	if e.MaxBodyBytes < 1 {
		return fmt.Errorf("engine.maxBodyBytes must be positive, not %d", e.MaxBodyBytes)
	}
	w := e.Weights
	if w.Queue < 0 || w.KVCache < 0 || w.InFlight < 0 || w.Prefix < 0 || w.Queue+w.KVCache+w.InFlight+w.Prefix == 0 {
		return fmt.Errorf("engine.weights %+v: each must be at least 0 and one positive", w)
	}
	if e.KVCacheFullPercent < 1 || e.KVCacheFullPercent > 100 {
		return fmt.Errorf("engine.kvCacheFullPercent must be 1 to 100, not %d", e.KVCacheFullPercent)
	}
	return nil
}

// validate checks that the metrics endpoint is a path and its port a port.
func (m *EngineMetrics) validate() error {
	if len(m.Path) == 0 || m.Path[0] != '/' || m.Port < 0 || m.Port > 65535 {
		return fmt.Errorf("metrics port %d path %q: want a port (0 for the serving port) and a path starting with /", m.Port, m.Path)
	}
	return nil
}
