/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
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
	// fails in a row; ejectedUntil is when an ejection ends (unix nanoseconds).
	fails        atomic.Int32
	ejectedUntil atomic.Int64
}

// Outstanding is the number of requests in flight to e.
func (e *Endpoint) Outstanding() int64 { return e.outstanding.Load() }

// Acquire counts a request to e; call Release when its response has ended.
func (e *Endpoint) Acquire() { e.outstanding.Add(1) }

// Release ends a request Acquire counted.
func (e *Endpoint) Release() { e.outstanding.Add(-1) }

func (e *Endpoint) ejected(now int64) bool { return now < e.ejectedUntil.Load() }

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

	mu   sync.Mutex // serialises Update
	snap atomic.Pointer[snapshot]
}

type snapshot struct {
	eps  []*Endpoint // sorted by Addr
	ring ring
}

// Update replaces the pod set with addrs. A pod that stays keeps its counters (its outstanding
// requests and its ejection); a pod that left is never picked again once Update returns.
func (p *Pool) Update(addrs []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addrs = slices.Clone(addrs)
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	old := map[string]*Endpoint{}
	if s := p.snap.Load(); s != nil {
		for _, e := range s.eps {
			old[e.Addr] = e
		}
	}
	eps := make([]*Endpoint, 0, len(addrs))
	for _, a := range addrs {
		e := old[a]
		if e == nil {
			e = &Endpoint{Addr: a}
		}
		eps = append(eps, e)
	}
	p.snap.Store(&snapshot{eps: eps, ring: newRing(eps)})
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

// Failed records a failure of e (a connection error, a timeout or a 5xx before any byte reached
// the client). It reports whether this failure ejected e.
func (p *Pool) Failed(e *Endpoint, now time.Time) bool {
	if n := e.fails.Add(1); int(n) >= max(p.Threshold, 1) {
		e.fails.Store(0)
		e.ejectedUntil.Store(now.Add(p.Cooldown).UnixNano())
		return true
	}
	return false
}

// Succeeded ends e's run of failures.
func (p *Pool) Succeeded(e *Endpoint) {
	if e.fails.Load() != 0 {
		e.fails.Store(0)
	}
}
