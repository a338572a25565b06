/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"testing"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// With the operator's default weights (DefaultScoring), a conversation's next turn goes to the pod
// that was sent its earlier turns (80 of its 100 blocks) though that pod reports 4 requests and
// another, sent only the shared system prompt (32 blocks), reports 1: the 48 blocks the match
// saves outweigh 3 requests of queue while the pod stays within the queue bound (E4, E9). At
// prefix weight 2 the queue won, and conversations through 4 replicas by session had p99 46 ms
// against the prefix scorer's 40 ms (docs/benchmarks/balancing.md).
func TestDefaultWeightsKeepAConversationOnThePodWithItsTurns(t *testing.T) {
	s := DefaultScoring()
	p := &balance.Pool{Threshold: 1 << 30, LoadFactor: 1.25}
	p.Update([]string{"192.0.2.1:8000", "192.0.2.2:8000"})
	turns, system := p.Endpoints()[0], p.Endpoints()[1]
	blocks := make([]uint64, 100)
	for i := range blocks {
		blocks[i] = uint64(i + 1)
	}
	p.Remember(turns, blocks[:80])
	p.Remember(system, blocks[:32])
	now := time.Unix(1_700_000_000, 0)
	turns.SetEngineLoad(balance.EngineLoad{Running: 4, HasKV: true, KVCache: 0.3, At: now})
	system.SetEngineLoad(balance.EngineLoad{Running: 1, HasKV: true, KVCache: 0.3, At: now})
	for range 20 {
		if e, n := p.Choose(balance.Request{Blocks: blocks, Engine: &s}, now); e != turns || n != 80 {
			t.Fatalf("weights %+v: chose the pod that had %d of the 100 blocks (queue %v), want the one with the conversation's 80 (queue 4)",
				s, n, map[bool]int{true: 4, false: 1}[e == turns])
		}
	}
}
