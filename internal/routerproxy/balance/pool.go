/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Endpoint is one pod address (host:port) with what the proxy counts about it.
type Endpoint struct {
	Addr string
	// outstanding are the requests the proxy has sent to this pod and not finished (including
	// open streams).
	outstanding atomic.Int64
	// health is its run of failures and its ejection.
	health Health
	// sent are the prompt blocks the proxy sent e (prefix scoring).
	sent blocks
	// engine is what e's model server last reported, sent64 the requests ever sent e
	// (engine-aware scoring, engine.go).
	engine atomic.Pointer[EngineLoad]
	sent64 atomic.Int64
	// prefill are the prompt blocks of the requests the proxy sent e that have not had their
	// first token (prefill.go).
	prefill atomic.Int64
}

// Health is e's run of failures and its ejection.
func (e *Endpoint) Health() *Health { return &e.health }

// Outstanding is the number of requests in flight to e.
func (e *Endpoint) Outstanding() int64 { return e.outstanding.Load() }

// Acquire counts a request to e; call Release when its response has ended.
func (e *Endpoint) Acquire() { e.outstanding.Add(1); e.sent64.Add(1) }

// Release ends a request Acquire counted.
func (e *Endpoint) Release() { e.outstanding.Add(-1) }

func (e *Endpoint) ejected(now int64) bool { return e.health.Cooling(time.Unix(0, now)) }

// Ejected says whether e is cooling down after failing several times in a row, at now.
func (e *Endpoint) Ejected(now time.Time) bool { return e.ejected(now.UnixNano()) }

// Pool is the ready pods of one backend. Reads (Pick) never block each other: the set is an
// immutable snapshot swapped by Update.
type Pool struct {
	// Threshold failures in a row eject a pod for Cooldown.
	Threshold int
	Cooldown  time.Duration
	// LoadFactor is c of consistent hashing with bounded loads: a pod takes a request for its
	// key while its outstanding requests stay at most c times the mean. 1.25 when zero.
	LoadFactor float64
	// BlocksPerPod is how many prompt block hashes are remembered per pod for prefix scoring
	// (an LRU); DefaultBlocksPerPod when zero.
	BlocksPerPod int
	// IntN draws least request's two pods and breaks the scorers' ties, as rand.IntN: rand.IntN
	// itself (the global source, safe for concurrent use) when nil. A simulation sets a seeded
	// source's, rand.New(src).IntN, so that a seed gives one result; a *rand.Rand is not safe for
	// concurrent use, so only a Pool picked from one goroutine may.
	IntN func(n int) int

	mu   sync.Mutex // serialises Update
	snap atomic.Pointer[snapshot]
	// away are pods that left the set while they still had requests in flight or an ejection
	// running (a readiness flap): when the same address comes back, it gets its counters back.
	away map[string]*Endpoint
}

type snapshot struct {
	eps  []*Endpoint // sorted by Addr
	ring ring
}

// Update replaces the pod set with addrs. A pod that stays keeps its counters (its outstanding
// requests and its ejection), and so does a pod that leaves and comes back while it still had
// requests in flight or an ejection running (its readiness flapped: the same address is the same
// pod). A pod that left is never picked again once Update returns; it is forgotten once it is idle
// and not ejected.
func (p *Pool) Update(addrs []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addrs = slices.Clone(addrs)
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	known := map[string]*Endpoint{}
	for a, e := range p.away {
		known[a] = e
	}
	if s := p.snap.Load(); s != nil {
		for _, e := range s.eps {
			known[e.Addr] = e
		}
	}
	eps := make([]*Endpoint, 0, len(addrs))
	for _, a := range addrs {
		e := known[a]
		if e == nil {
			e = &Endpoint{Addr: a}
		}
		delete(known, a)
		eps = append(eps, e)
	}
	now := time.Now().UnixNano()
	p.away = map[string]*Endpoint{}
	for a, e := range known {
		if e.Outstanding() > 0 || e.ejected(now) {
			p.away[a] = e
		}
	}
	p.snap.Store(&snapshot{eps: eps, ring: newRing(eps)})
}

func (p *Pool) intN(n int) int {
	if p.IntN != nil {
		return p.IntN(n)
	}
	return rand.IntN(n)
}

// Len is the number of pods.
func (p *Pool) Len() int {
	if s := p.snap.Load(); s != nil {
		return len(s.eps)
	}
	return 0
}

// Endpoints is the current pod set.
func (p *Pool) Endpoints() []*Endpoint {
	if s := p.snap.Load(); s != nil {
		return s.eps
	}
	return nil
}

// Failed records a failure of e (a connection error or a 5xx before any byte reached the
// client; a timeout is not one). It reports whether this failure ejected e.
func (p *Pool) Failed(e *Endpoint, now time.Time) bool {
	return e.health.Failed(now, p.Threshold, p.Cooldown)
}

// Remember records that e was sent a prompt of these blocks (prefix scoring).
func (p *Pool) Remember(e *Endpoint, hashes []uint64) {
	capacity := p.BlocksPerPod
	if capacity == 0 {
		capacity = DefaultBlocksPerPod
	}
	e.sent.add(hashes, capacity)
}

// Succeeded ends e's run of failures.
func (p *Pool) Succeeded(e *Endpoint) { e.health.Succeeded() }
