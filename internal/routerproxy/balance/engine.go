/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"math/rand/v2"
	"time"
)

// EngineLoad is what a pod's model server last reported about its load (internal/routerproxy/
// engine reads it).
type EngineLoad struct {
	// Waiting are the requests queued in the engine, Running those in its batch: every router
	// replica's and every other client's.
	Waiting, Running float64
	// KVCache is the KV cache's use, 0 to 1, when HasKV (a runtime may export none).
	KVCache float64
	HasKV   bool
	// At is when the read started; SentBefore is Sent() at that moment.
	//
	// Note: requests this proxy sent the pod after the read began are not in the figures; the
	// scorer adds them (at most those still in flight), so that a burst between two reads does
	// not all land on the pod that looked idle.
	At         time.Time
	SentBefore int64
}

// EngineScoring are the engine-aware scorer's weights and bounds (routingv1.EngineScoring, read).
type EngineScoring struct {
	Queue, KVCache, InFlight, Prefix float64
	// KVFull (0 to 1) and LongPrompt (blocks): a pod whose KV cache is at least KVFull is not given
	// a request with LongPrompt or more blocks it was not sent, while another pod can take it.
	KVFull     float64
	LongPrompt int
	// StaleAfter: an older read does not count; the pod is scored blind.
	StaleAfter time.Duration
}

// SetEngineLoad records what e's model server reported.
func (e *Endpoint) SetEngineLoad(l EngineLoad) { e.engine.Store(&l) }

// Sent is how many requests the proxy has sent e (Acquire calls), ever.
func (e *Endpoint) Sent() int64 { return e.sent64.Load() }

// EngineFresh says whether e's engine reported within staleAfter of now.
func (e *Endpoint) EngineFresh(now time.Time, staleAfter time.Duration) bool {
	l := e.engine.Load()
	return l != nil && now.Sub(l.At) <= staleAfter
}

// prefixScale weighs a prompt's prefix match by its length, up to 4 times for a prompt of 4
// LongPrompt blocks and more.
//
// Note: a match saves prefill in proportion to the blocks matched: a 100k-token document found in
// a pod's cache saves seconds, a short system prompt milliseconds. Without the scale the queue
// term outweighs a long document's match and sends it to be prefilled again elsewhere
// (docs/benchmarks/balancing.md measured p99 1.9x the prefix scorer's with documents); the cap
// keeps a hot long prefix from drawing every request to one pod whatever its queue.
func prefixScale(blocks, long int) float64 {
	return min(max(float64(blocks)/float64(max(long, 1)), 1), 4)
}

// view is one candidate as the engine-aware scorer sees it.
type view struct {
	e          *Endpoint
	queue      float64 // the engine's waiting and running, with what it cannot have counted yet
	kv         float64
	own        float64 // this proxy's requests in flight
	matched    int     // blocks of the prompt it was sent
	fresh      bool
	wouldEvict bool
}

// engineScored is the candidate with the best score
//
//	Prefix·scale·matched/blocks − Queue·queue/max(queue) − KVCache·kv − InFlight·own/max(own)
//
// the Gateway API Inference Extension's scorers (queue, KV-cache utilization, prefix) summed with
// weights, plus this proxy's own in-flight count. A pod whose read is stale or failed is scored
// blind: its queue is the larger of this proxy's in-flight count and the longest queue reported,
// its KV use the highest reported, and it loses ties, so it is never preferred over a reporting
// pod for its silence. A pod whose KV cache is nearly full is skipped for a long prompt it does
// not hold, unless every candidate is.
func (p *Pool) engineScored(cands []*Endpoint, r Request, now time.Time) (*Endpoint, int) {
	w := r.Engine
	vs := make([]view, len(cands))
	var qMax, kvMax float64
	for i, e := range cands {
		v := view{e: e, own: float64(e.Outstanding()), matched: e.sent.match(r.Blocks)}
		if l := e.engine.Load(); l != nil && now.Sub(l.At) <= w.StaleAfter {
			v.fresh = true
			unseen := min(max(e.Sent()-l.SentBefore, 0), e.Outstanding())
			v.queue = l.Waiting + l.Running + float64(unseen)
			if l.HasKV {
				v.kv = l.KVCache
				v.wouldEvict = l.KVCache >= w.KVFull && len(r.Blocks)-v.matched >= max(w.LongPrompt, 1)
			}
			qMax, kvMax = max(qMax, v.queue), max(kvMax, v.kv)
		}
		vs[i] = v
	}
	allEvict := true
	var ownMax float64
	for i := range vs {
		v := &vs[i]
		if !v.fresh {
			v.queue, v.kv = max(v.own, qMax), kvMax
		}
		qMax, ownMax = max(qMax, v.queue), max(ownMax, v.own)
		allEvict = allEvict && v.wouldEvict
	}
	var best *view
	var bestScore float64
	ties := 0
	for i := range vs {
		v := &vs[i]
		if v.wouldEvict && !allEvict {
			continue
		}
		s := -w.Queue*v.queue/max(qMax, 1) - w.KVCache*v.kv - w.InFlight*v.own/max(ownMax, 1)
		if len(r.Blocks) > 0 {
			s += w.Prefix * float64(v.matched) / float64(len(r.Blocks)) * prefixScale(len(r.Blocks), w.LongPrompt)
		}
		if !v.fresh {
			s -= 1e-9
		}
		switch {
		case best == nil || s > bestScore:
			best, bestScore, ties = v, s, 1
		case s == bestScore:
			if ties++; rand.IntN(ties) == 0 {
				best = v
			}
		}
	}
	return best.e, best.matched
}
