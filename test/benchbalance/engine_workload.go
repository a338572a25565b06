/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/engine"
	"github.com/llmkube/operator/internal/routerproxy/prefix"
)

// SimWorkload is how the engine simulation's requests are drawn: the popular prompts or
// conversations of Options, with, when set, bursts of long prompts or long documents among them.
type SimWorkload struct {
	Base Workload
	// Bursts: every BurstEvery, BurstSize prompts of BurstBytes bytes each (distinct), within
	// 20 ms.
	BurstEvery time.Duration
	BurstSize  int
	BurstBytes int
	// Documents: DocRate requests per second ask about one of Docs documents of DocBytes bytes
	// (a question of their own after it).
	DocRate  float64
	Docs     int
	DocBytes int
}

// Draw is the workload's arrivals for seed, in order.
func (w SimWorkload) Draw(o Options, seed uint64) []request {
	o.Seed = seed
	h := prefix.NewHasher(prefix.DefaultBlockBytes, prefix.DefaultMaxBlocks)
	reqs := arrivals(o, w.Base, h)
	rng := rand.New(rand.NewPCG(seed, 3))
	n := 0
	if w.BurstEvery > 0 {
		for at := w.BurstEvery / 2; at < o.Duration; at += w.BurstEvery {
			for range w.BurstSize {
				n++
				msgs := []message{{"user", sentence("Summarise this report", 1_000_000+n+int(seed)*100_000, w.BurstBytes)}}
				reqs = append(reqs, chatRequest(at+time.Duration(rng.Int64N(int64(20*time.Millisecond))), msgs, uint64(1<<40+n), h))
			}
		}
	}
	if w.DocRate > 0 {
		docs := make([]string, w.Docs)
		for i := range docs {
			docs[i] = sentence("Contract", 2_000_000+i, w.DocBytes)
		}
		for at := time.Duration(0); ; {
			at += time.Duration(rng.ExpFloat64() / w.DocRate * float64(time.Second))
			if at >= o.Duration {
				break
			}
			n++
			d := rng.IntN(len(docs))
			msgs := []message{{"system", docs[d]}, {"user", fmt.Sprintf("Question %d about it?", n)}}
			reqs = append(reqs, chatRequest(at, msgs, uint64(1<<41+d), h))
		}
	}
	slices.SortStableFunc(reqs, func(a, b request) int { return int(a.at - b.at) })
	return reqs
}

// For is the scenario's draw of arrivals by seed, with o's rate, duration and base workload.
func (w SimWorkload) For(o Options) func(seed uint64) []request {
	return func(seed uint64) []request { return w.Draw(o, seed) }
}

// DefaultScoring is EngineAware's scoring as the operator writes it for a router without weights.
func DefaultScoring() balance.EngineScoring {
	d := modelrouter.DefaultEngineScoring()
	return *engine.Scoring(&d)
}

// SimScenarios are the engine simulation's scenarios on o's popular prompts and conversations,
// each d of arrivals: the two workloads alone, with bursts of long prompts, with 100k-token
// documents among short chats, and through 2 and 4 router replicas (requests at random, and by
// session). base is what they draw from (for the report).
func SimScenarios(o Options, d time.Duration) ([]SimScenario, Options) {
	o.Duration = d
	o.Prefixes = 256 // 7680 blocks of system prompts: more than one pod's KV cache holds
	o.Users = 256
	bursts := SimWorkload{Base: Popular, BurstEvery: time.Second, BurstSize: 16, BurstBytes: 64 << 10}
	docs := SimWorkload{Base: Popular, DocRate: 1, Docs: 8, DocBytes: 400 << 10}
	conv := SimWorkload{Base: Conversations}
	return []SimScenario{
		{Name: "Popular prompts", Workload: SimWorkload{Base: Popular}.For(o), Replicas: 1},
		{Name: "Conversations", Workload: conv.For(o), Replicas: 1},
		{Name: "Bursts of long prompts (16 of 16k tokens every second) among popular prompts", Workload: bursts.For(o), Replicas: 1},
		{Name: "Short chats and 100k-token documents (1 a second, 8 documents)", Workload: docs.For(o), Replicas: 1},
		{Name: "Conversations through 2 router replicas", Workload: conv.For(o), Replicas: 2},
		{Name: "Conversations through 4 router replicas", Workload: conv.For(o), Replicas: 4},
		{Name: "Bursts of long prompts through 4 router replicas", Workload: bursts.For(o), Replicas: 4},
		{Name: "Conversations through 4 router replicas, each conversation on one replica (a session key the Service hashes)", Workload: conv.For(o), Replicas: 4, BySession: true},
	}, o
}
