/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Request says what a pick may consider.
type Request struct {
	// Key, when HasKey, asks for affinity: the same key goes to the same pod while that pod's
	// load stays within the bound (consistent hashing with bounded loads).
	Key    uint64
	HasKey bool
	// Tried are pods this request already failed on: never picked again for it.
	Tried []*Endpoint
	// AllowEjected lets an ejected pod be picked when no other is left (the request's last
	// option: better a pod that may have recovered than no answer).
	AllowEjected bool
}

// Pick chooses a pod for r, or nil when none is left. Without a key: the one with fewer
// outstanding requests of two picked at random (power of two choices), which avoids the herd a
// global least-loaded choice causes among proxy replicas while still steering around a slow pod.
func (p *Pool) Pick(r Request, now time.Time) *Endpoint {
	s := p.snap.Load()
	if s == nil || len(s.eps) == 0 {
		return nil
	}
	cands := p.candidates(s, r, now.UnixNano(), false)
	if len(cands) == 0 && r.AllowEjected {
		cands = p.candidates(s, r, now.UnixNano(), true)
	}
	switch {
	case len(cands) == 0:
		return nil
	case r.HasKey:
		return p.bounded(s, cands, r.Key)
	case len(cands) == 1:
		return cands[0]
	}
	i := rand.IntN(len(cands))
	j := rand.IntN(len(cands) - 1)
	if j >= i {
		j++
	}
	a, b := cands[i], cands[j]
	if b.Outstanding() < a.Outstanding() {
		return b
	}
	return a
}

// Remaining is how many pods Pick could still choose for r.
func (p *Pool) Remaining(r Request, now time.Time) int {
	s := p.snap.Load()
	if s == nil {
		return 0
	}
	n := len(p.candidates(s, r, now.UnixNano(), false))
	if n == 0 && r.AllowEjected {
		n = len(p.candidates(s, r, now.UnixNano(), true))
	}
	return n
}

func (p *Pool) candidates(s *snapshot, r Request, now int64, ejectedToo bool) []*Endpoint {
	out := make([]*Endpoint, 0, len(s.eps))
	for _, e := range s.eps {
		if slices.Contains(r.Tried, e) || (!ejectedToo && e.ejected(now)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// bounded walks the ring from key and takes the first candidate whose load, with this request,
// stays within ceil(c * (total+1) / n) (Mirrokni, Thorup, Zadimoghaddam, "Consistent Hashing
// with Bounded Loads", 2018); when none does, the least loaded candidate.
func (p *Pool) bounded(s *snapshot, cands []*Endpoint, key uint64) *Endpoint {
	c := p.LoadFactor
	if c <= 1 {
		c = 1.25
	}
	var total int64
	for _, e := range cands {
		total += e.Outstanding()
	}
	limit := int64(math.Ceil(c * float64(total+1) / float64(len(cands))))
	if e := s.ring.walk(key, func(e *Endpoint) bool {
		return slices.Contains(cands, e) && e.Outstanding()+1 <= limit
	}); e != nil {
		return e
	}
	least := cands[0]
	for _, e := range cands[1:] {
		if e.Outstanding() < least.Outstanding() {
			least = e
		}
	}
	return least
}
