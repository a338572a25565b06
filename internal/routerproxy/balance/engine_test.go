/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"testing"
	"time"
)

var testScoring = &EngineScoring{Queue: 3, KVCache: 1, InFlight: 1, Prefix: 2, KVFull: 0.9, LongPrompt: 4, StaleAfter: time.Second}

// report sets what each pod's engine says, read at now.
func report(p *Pool, now time.Time, loads ...EngineLoad) {
	for i, e := range p.Endpoints() {
		l := loads[i]
		l.At, l.SentBefore = now, e.Sent()
		e.SetEngineLoad(l)
	}
}

func picks(p *Pool, r Request, now time.Time, n int) map[*Endpoint]int {
	out := map[*Endpoint]int{}
	for range n {
		out[p.Pick(r, now)]++
	}
	return out
}

// a pod whose engine reports a long queue gets no request while the others report short
// ones, though this proxy has nothing in flight to any of them (the load came through another
// replica); once its queue drains it is picked again.
// Proves E1.
func TestEngineAwareAvoidsThePodWhoseEngineQueueIsLong(t *testing.T) {
	p := pool(3)
	now := time.Now()
	saturated := p.Endpoints()[0]
	report(p, now, EngineLoad{Waiting: 20, Running: 8}, EngineLoad{Running: 1}, EngineLoad{Running: 2})
	if got := picks(p, Request{Engine: testScoring}, now, 300); got[saturated] != 0 {
		t.Fatalf("the pod with 20 requests waiting in its engine got %d of 300 picks: %v", got[saturated], got)
	}
	report(p, now, EngineLoad{}, EngineLoad{Running: 1}, EngineLoad{Running: 2})
	if got := picks(p, Request{Engine: testScoring}, now, 300); got[saturated] != 300 {
		t.Fatalf("the drained pod, now the idlest, got %d of 300 picks", got[saturated])
	}
}

// requests this proxy sent after the last read count as queued, so a burst between two reads
// spreads instead of landing whole on the pod that looked idle.
// Proves E1.
func TestEngineAwareCountsRequestsSentSinceTheRead(t *testing.T) {
	p := pool(2)
	now := time.Now()
	report(p, now, EngineLoad{Running: 2}, EngineLoad{Running: 2})
	queueOnly := *testScoring
	queueOnly.InFlight = 0 // the engine's queue alone must see the burst
	got := map[*Endpoint]int{}
	for range 10 {
		e := p.Pick(Request{Engine: &queueOnly}, now)
		e.Acquire()
		got[e]++
	}
	for _, e := range p.Endpoints() {
		if got[e] != 5 {
			t.Fatalf("a burst of 10 between two reads went %d/%d", got[p.Endpoints()[0]], got[p.Endpoints()[1]])
		}
	}
}

// a pod whose read is stale (or failed) is scored blind: it is not preferred over a reporting
// pod with the same figures, and its own in-flight count still weighs.
// Proves E2.
func TestEngineAwareBlindPodIsNotPreferred(t *testing.T) {
	p := pool(2)
	now := time.Now()
	report(p, now.Add(-time.Hour), EngineLoad{}, EngineLoad{})
	fresh := p.Endpoints()[1]
	l := EngineLoad{At: now, SentBefore: fresh.Sent()}
	fresh.SetEngineLoad(l)
	if got := picks(p, Request{Engine: testScoring}, now, 200); got[fresh] != 200 {
		t.Fatalf("the blind pod was picked %d of 200 times over an idle reporting one", 200-got[fresh])
	}
	// Every pod blind: this proxy's own counts decide, as least request would.
	report(p, now.Add(-time.Hour), EngineLoad{}, EngineLoad{})
	busy := p.Endpoints()[0]
	busy.Acquire()
	if got := picks(p, Request{Engine: testScoring}, now, 200); got[busy] != 0 {
		t.Fatalf("with every pod blind, the one with a request in flight got %d of 200", got[busy])
	}
}

// a pod whose KV cache is nearly full is not given a long prompt it does not hold, even when
// it is the idlest; a short prompt, or one it holds, may still go there.
// Proves E3.
func TestEngineAwareKeepsLongPromptsOffANearlyFullKVCache(t *testing.T) {
	p := pool(2)
	now := time.Now()
	full := p.Endpoints()[0]
	report(p, now, EngineLoad{KVCache: 0.95, HasKV: true}, EngineLoad{Waiting: 3, Running: 8, KVCache: 0.5, HasKV: true})
	long := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if got := picks(p, Request{Engine: testScoring, Blocks: long}, now, 100); got[full] != 0 {
		t.Fatalf("a long prompt went %d of 100 times to the pod whose KV cache is 95%% full", got[full])
	}
	if got := picks(p, Request{Engine: testScoring, Blocks: long[:2]}, now, 100); got[full] != 100 {
		t.Fatalf("a short prompt should go to the idle pod despite its cache: %d of 100", got[full])
	}
	p.Remember(full, long)
	if got := picks(p, Request{Engine: testScoring, Blocks: long}, now, 100); got[full] != 100 {
		t.Fatalf("a long prompt the full pod holds needs no eviction: %d of 100", got[full])
	}
}

// with equal load the prefix decides: the pod that was sent the prompt's start wins; a
// queue far longer than the others' outweighs it.
// Proves E4.
func TestEngineAwareWeighsThePrefixAgainstTheQueue(t *testing.T) {
	p := pool(3)
	now := time.Now()
	blocks := []uint64{11, 12, 13, 14}
	holder := p.Endpoints()[2]
	p.Remember(holder, blocks)
	report(p, now, EngineLoad{Running: 4}, EngineLoad{Running: 4}, EngineLoad{Running: 4})
	if got := picks(p, Request{Engine: testScoring, Blocks: blocks}, now, 100); got[holder] != 100 {
		t.Fatalf("at equal load the pod holding the prefix got %d of 100", got[holder])
	}
	report(p, now, EngineLoad{Running: 4}, EngineLoad{Running: 4}, EngineLoad{Waiting: 30, Running: 8})
	if got := picks(p, Request{Engine: testScoring, Blocks: blocks}, now, 100); got[holder] != 0 {
		t.Fatalf("the prefix holder with 30 waiting still got %d of 100", got[holder])
	}
}

// the engines' queues count requests, not their work: at equal reported queues and equal
// requests in flight, the pod this replica sent a long prompt it has had no first token for is
// not given the next request; once that first token comes, both pods are chosen again.
// Proves E7.
func TestEngineAwareWeighsThePromptWorkItSentNotOnlyTheRequestCount(t *testing.T) {
	p := pool(2)
	now := time.Now()
	long, short := p.Endpoints()[0], p.Endpoints()[1]
	long.Acquire()
	short.Acquire()
	prefill := long.StartPrefill(512) // a 16k-token prompt
	short.StartPrefill(2)
	report(p, now, EngineLoad{Running: 3}, EngineLoad{Running: 3})
	if got := picks(p, Request{Engine: testScoring}, now, 200); got[long] != 0 {
		t.Fatalf("the pod still prefilling a 512-block prompt got %d of 200 picks at the same queue", got[long])
	}
	prefill.Done()
	prefill.Done() // at most once
	if long.Prefilling() != 0 {
		t.Fatalf("pending work %d after the first token", long.Prefilling())
	}
	if got := picks(p, Request{Engine: testScoring}, now, 200); got[long] == 0 {
		t.Fatal("the pod whose prompt had its first token is still avoided")
	}
}

// the engines count three requests for each one this replica had in flight at the read (on the
// pods it had requests in flight to), so about three replicas send to these pods alike: each
// request this replica sends a pod after the read counts as three in its queue, and a burst
// alternates instead of piling on the pod that looked idlest (as it would if only this
// replica's sends counted).
// Proves E8.
func TestEngineAwareCountsUnseenSendsByThisReplicasShare(t *testing.T) {
	p := pool(2)
	now := time.Now()
	idle, busy := p.Endpoints()[0], p.Endpoints()[1]
	busy.Acquire()
	idle.SetEngineLoad(EngineLoad{Running: 1, At: now, SentBefore: idle.Sent()})
	busy.SetEngineLoad(EngineLoad{Running: 3, At: now, SentBefore: busy.Sent(), InFlightBefore: 1})
	queueOnly := *testScoring
	queueOnly.InFlight, queueOnly.KVCache = 0, 0
	var order []*Endpoint
	for range 4 {
		e := p.Pick(Request{Engine: &queueOnly}, now)
		e.Acquire()
		order = append(order, e)
	}
	want := []*Endpoint{idle, busy, idle, busy}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("pick %d went to the pod reporting %v, want alternation (idle, busy, idle, busy): each send counts 3 with 3 requests in the engine for 1 of ours",
				i+1, map[*Endpoint]string{idle: "1 running", busy: "3 running"}[order[i]])
		}
	}
}

// a long prompt's prefix match weighs up to four times a short one's, yet it counts only while
// the pod's queue is within the load bound (c × the mean queue + 1): past it, the prompt goes
// to a pod with a short queue and is prefilled there, rather than queueing behind the holder's.
// Proves E9.
func TestEngineAwarePrefixCountsOnlyWithinTheQueueBound(t *testing.T) {
	p := pool(3)
	now := time.Now()
	long := make([]uint64, 16) // 4 LongPrompt blocks of testScoring: the match weighs 4 times
	for i := range long {
		long[i] = uint64(100 + i)
	}
	holder := p.Endpoints()[0]
	p.Remember(holder, long)
	report(p, now, EngineLoad{Running: 7}, EngineLoad{Running: 4}, EngineLoad{Running: 4})
	if got := picks(p, Request{Engine: testScoring, Blocks: long}, now, 100); got[holder] != 100 {
		t.Fatalf("within the bound (7 <= 1.25 × 15/3 + 1 = 7.25) the holder of the prompt got %d of 100", got[holder])
	}
	report(p, now, EngineLoad{Running: 10}, EngineLoad{Running: 4}, EngineLoad{Running: 4})
	if got := picks(p, Request{Engine: testScoring, Blocks: long}, now, 100); got[holder] != 0 {
		t.Fatalf("past the bound (10 > 1.25 × 18/3 + 1 = 8.5) the holder still got %d of 100", got[holder])
	}
}

// a pod saturated by traffic this replica does not send to does not inflate the share: a burst
// between two reads still never reaches it while the others report short queues.
// Proves E1, E8.
func TestEngineAwareShareIgnoresAPodSaturatedByOthers(t *testing.T) {
	p := pool(3)
	now := time.Now()
	saturated, b, c := p.Endpoints()[0], p.Endpoints()[1], p.Endpoints()[2]
	b.Acquire() // one request of ours in flight at the read, to b only
	saturated.SetEngineLoad(EngineLoad{Waiting: 40, Running: 8, At: now, SentBefore: saturated.Sent()})
	b.SetEngineLoad(EngineLoad{Running: 1, At: now, SentBefore: b.Sent(), InFlightBefore: 1})
	c.SetEngineLoad(EngineLoad{Running: 2, At: now, SentBefore: c.Sent()})
	got := map[*Endpoint]int{}
	for range 30 {
		e := p.Pick(Request{Engine: testScoring}, now)
		e.Acquire()
		got[e]++
	}
	if got[saturated] != 0 {
		t.Fatalf("the pod with 48 requests from others got %d of a burst of 30: %v", got[saturated], got)
	}
}
