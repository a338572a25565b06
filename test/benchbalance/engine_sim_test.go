/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"reflect"
	"testing"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// A short engine simulation of every policy through two replicas with long documents: every
// arrival gets its first token, the KV caches both hit and evict, and each policy has a row. No
// times are asserted: the clock is virtual, the figures are the benchmark's to report.
func TestEngineSimSmoke(t *testing.T) {
	base := Options{Prefixes: 32, PromptBlocks: 8, ZipfS: 1.1, Rate: 200, Duration: 500 * time.Millisecond}
	o := SimOptions{Pods: 3, Slots: 2, KVBlocks: 512, OutputBlocks: 8, Prefill: 100 * time.Microsecond, Decode: time.Millisecond, Interval: 50 * time.Millisecond,
		Scoring: balance.EngineScoring{Queue: 3, KVCache: 1, InFlight: 1, Prefix: 2, KVFull: 0.9, LongPrompt: 64, StaleAfter: 150 * time.Millisecond}, LoadFactor: 1.25, Rounds: 1}
	w := SimWorkload{Base: Popular, DocRate: 10, Docs: 2, DocBytes: 600 * 128}
	sc := SimScenario{Name: "smoke", Workload: w.For(base), Replicas: 2}
	res := RunSim(o, sc)
	n := len(w.Draw(base, 1))
	for _, r := range res {
		if r.Requests != n {
			t.Errorf("%s: %d first tokens of %d arrivals", r.Policy, r.Requests, n)
		}
		if r.HitRatio <= 0 || r.HitRatio >= 1 {
			t.Errorf("%s: cache-hit ratio %.2f", r.Policy, r.HitRatio)
		}
	}
	if md := SimMarkdown(o, base, []SimScenario{sc}, [][]SimResult{res}); len(md) == 0 {
		t.Error("empty report")
	}
}

// The same scenario and seeds give the same figures, every policy through several replicas: the
// arrivals, the read times and the balancers' random choices (Pool.IntN) all come from the seed,
// so a difference between two runs of the benchmark is the code's, not chance's.
func TestEngineSimRepeats(t *testing.T) {
	base := Options{Prefixes: 64, PromptBlocks: 8, ZipfS: 1.1, Rate: 400, Duration: 500 * time.Millisecond}
	o := SimOptions{Pods: 3, Slots: 2, KVBlocks: 512, OutputBlocks: 8, Prefill: 100 * time.Microsecond, Decode: time.Millisecond, Interval: 50 * time.Millisecond,
		Scoring: DefaultScoring(), LoadFactor: 1.25, Rounds: 2}
	w := SimWorkload{Base: Popular, BurstEvery: 200 * time.Millisecond, BurstSize: 4, BurstBytes: 8 << 10}
	sc := SimScenario{Name: "repeat", Workload: w.For(base), Replicas: 3}
	a, b := RunSim(o, sc), RunSim(o, sc)
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Errorf("%s: two runs of the same seeds differ:\n%+v\n%+v", a[i].Policy, a[i], b[i])
		}
	}
}
