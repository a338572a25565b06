/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import "time"

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
	// InFlightBefore is Outstanding() at that moment: what of the engine's figures this proxy
	// sent (replicaShare).
	InFlightBefore int64
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

// maxShare bounds replicaShare: a router of more replicas than this is unlikely, and an engine
// serving mostly other clients says little about this replica's sends.
const maxShare = 8

// replicaShare is how many requests the engines count for each one this proxy had in flight at
// their last reads (1 to maxShare): about the number of router replicas (and other clients)
// sending to these pods alike. Only the pods this proxy had requests in flight to at their read
// count: a pod saturated by others' traffic this proxy does not send to says nothing of how many
// replicas share the pods it does send to.
//
// Note: E1 counts the requests this replica sent a pod since its last read as queued; the other
// replicas, reading the same figures, send theirs to the same pod in the same interval and this
// replica cannot see them. Scaling its own unseen sends by its share of the engines' load
// estimates theirs: with 4 replicas a pod that looked idle at the read is known to take about
// four requests for each one this replica sends it (docs/benchmarks/balancing.md: bursts of long
// prompts through 4 replicas, p99 1.33 s to 1.23 s).
func replicaShare(cands []*Endpoint, staleAfter time.Duration, now time.Time) float64 {
	var engines, own float64
	for _, e := range cands {
		if l := e.engine.Load(); l != nil && now.Sub(l.At) <= staleAfter && l.InFlightBefore > 0 {
			engines += l.Waiting + l.Running
			own += float64(l.InFlightBefore)
		}
	}
	if own == 0 {
		return 1
	}
	return min(max(engines/own, 1), maxShare)
}

// workScale is the pending prompt work (in blocks) at which the work term weighs as much as the
// longest queue: eight long prompts.
//
// Note: normalising by the largest pending work alone made a pod with one short prompt pending
// look as loaded as one with many long ones, and the work term then outweighed prefix affinity for
// ordinary chats (p99 of conversations 40 ms to 48 ms in the benchmark); below this bound the
// term stays proportional to the work.
const workScale = 8

// queueBound is the queue above which a pod's prefix match does not count: c times the mean
// queue, plus one, c = LoadFactor (consistent hashing with bounded loads, as PrefixAffinity bounds
// its pods' in-flight counts).
//
// Note: a 100k-token document's match weighs up to 4 times a short prompt's, enough to keep
// sending documents, and the chats that share their pod's cached prefixes, to a pod whose queue
// has grown far past the others'; the queue term alone does not stop it, being relative to the
// longest queue. With the bound the documents' p99 fell from 103 ms to 59-65 ms in the benchmark
// (docs/benchmarks/balancing.md), the other rows within their spread.
func (p *Pool) queueBound(vs []view) float64 {
	c := p.LoadFactor
	if c <= 1 {
		c = 1.25
	}
	var sum float64
	for _, v := range vs {
		sum += v.queue
	}
	return c*sum/float64(len(vs)) + 1
}

// view is one candidate as the engine-aware scorer sees it.
type view struct {
	e          *Endpoint
	queue      float64 // the engine's waiting and running, with what it cannot have counted yet
	kv         float64
	own        float64 // this proxy's requests in flight
	work       float64 // prompt blocks this proxy sent and has had no first token for
	matched    int     // blocks of the prompt it was sent
	fresh      bool
	wouldEvict bool
}

// engineScored is the candidate with the best score
//
//	Prefix·scale·matched/blocks − Queue·(queue/max(queue) + work/max(work, 8·LongPrompt))
//	  − KVCache·kv − InFlight·own/max(own)
//
// the Gateway API Inference Extension's scorers (queue, KV-cache utilization, prefix) summed with
// weights, plus this proxy's own in-flight count and the prompt work it sent (prefill.go). A pod whose read is stale or failed is scored
// blind: its queue is the larger of this proxy's in-flight count and the longest queue reported,
// its KV use the highest reported, and it loses ties, so it is never preferred over a reporting
// pod for its silence. A pod's prefix match counts only while its queue is within queueBound. A
// pod whose KV cache is nearly full is skipped for a long prompt it does
// not hold, unless every candidate is.
func (p *Pool) engineScored(cands []*Endpoint, r Request, now time.Time) (*Endpoint, int) {
	w := r.Engine
	vs := make([]view, len(cands))
	var qMax, kvMax, workMax float64
	share := replicaShare(cands, w.StaleAfter, now)
	for i, e := range cands {
		v := view{e: e, own: float64(e.Outstanding()), work: float64(e.Prefilling()), matched: e.sent.match(r.Blocks)}
		workMax = max(workMax, v.work)
		if l := e.engine.Load(); l != nil && now.Sub(l.At) <= w.StaleAfter {
			v.fresh = true
			unseen := min(max(e.Sent()-l.SentBefore, 0), e.Outstanding())
			v.queue = l.Waiting + l.Running + share*float64(unseen)
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
	workMax = max(workMax, float64(workScale*max(w.LongPrompt, 1)))
	bound := p.queueBound(vs)
	var best *view
	var bestScore float64
	ties := 0
	for i := range vs {
		v := &vs[i]
		if v.wouldEvict && !allEvict {
			continue
		}
		s := -w.Queue*(v.queue/max(qMax, 1)+v.work/workMax) - w.KVCache*v.kv - w.InFlight*v.own/max(ownMax, 1)
		if len(r.Blocks) > 0 && v.queue <= bound {
			s += w.Prefix * float64(v.matched) / float64(len(r.Blocks)) * prefixScale(len(r.Blocks), w.LongPrompt)
		}
		if !v.fresh {
			s -= 1e-9
		}
		switch {
		case best == nil || s > bestScore:
			best, bestScore, ties = v, s, 1
		case s == bestScore:
			if ties++; p.intN(ties) == 0 {
				best = v
			}
		}
	}
	return best.e, best.matched
}
