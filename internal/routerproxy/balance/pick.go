/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"math"
	"slices"
	"time"
)

// Request says what a pick may consider.
type Request struct {
	// Key, when HasKey, asks for affinity: the same key goes to the same pod while that pod's
	// load stays within the bound (consistent hashing with bounded loads).
	Key    uint64
	HasKey bool
	// Blocks, when set and there is no key, asks for prefix scoring: the chain hashes of the
	// prompt's blocks (internal/routerproxy/prefix), first block first.
	Blocks []uint64
	// Tried are pods this request already failed on: never picked again for it.
	Tried []*Endpoint
	// Engine, when set and there is no key, asks for engine-aware scoring (engine.go) of the
	// pods' reported load, this proxy's in-flight counts and the prefix match of Blocks.
	Engine *EngineScoring
	// AllowEjected lets an ejected pod be picked when no other is left (the request's last
	// option: better a pod that may have recovered than no answer).
	AllowEjected bool
}

// Pick chooses a pod for r, or nil when none is left. With a key: consistent hashing with
// bounded loads (bounded). With blocks: the pod that was sent the longest prefix of them, within
// the same load bound (scored). Otherwise, and when no pod within the bound was sent the first
// block: least request, the one with fewer outstanding requests of two picked at random (power
// of two choices), which avoids the herd a global least-loaded choice causes among proxy
// replicas while still steering around a slow pod.
func (p *Pool) Pick(r Request, now time.Time) *Endpoint {
	e, _ := p.Choose(r, now)
	return e
}

// Choose is Pick that also says how many of r.Blocks the chosen pod was sent already, whatever
// chose it (0 without blocks).
func (p *Pool) Choose(r Request, now time.Time) (*Endpoint, int) {
	s := p.snap.Load()
	if s == nil || len(s.eps) == 0 {
		return nil, 0
	}
	cands := p.candidates(s, r, now.UnixNano(), false)
	if len(cands) == 0 && r.AllowEjected {
		cands = p.candidates(s, r, now.UnixNano(), true)
	}
	switch {
	case len(cands) == 0:
		return nil, 0
	case r.HasKey:
		e := p.bounded(s, cands, r.Key)
		return e, e.sent.match(r.Blocks)
	case r.Engine != nil:
		return p.engineScored(cands, r, now)
	case len(r.Blocks) > 0:
		if e, n := p.scored(cands, r.Blocks); e != nil {
			return e, n
		}
	}
	e := p.leastRequest(cands)
	return e, e.sent.match(r.Blocks)
}

// leastRequest is the less busy of two of cands picked at random.
func (p *Pool) leastRequest(cands []*Endpoint) *Endpoint {
	if len(cands) == 1 {
		return cands[0]
	}
	i := p.intN(len(cands))
	j := p.intN(len(cands) - 1)
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

// limit is the bound of a pod's load with this request: ceil(c * (total+1) / n) (Mirrokni,
// Thorup, Zadimoghaddam, "Consistent Hashing with Bounded Loads", 2018).
func (p *Pool) limit(cands []*Endpoint) int64 {
	c := p.LoadFactor
	if c <= 1 {
		c = 1.25
	}
	var total int64
	for _, e := range cands {
		total += e.Outstanding()
	}
	return int64(math.Ceil(c * float64(total+1) / float64(len(cands))))
}

// scored is the candidate within the load bound that was sent the longest prefix of blocks, and
// that length; among equal lengths the one with the fewest outstanding requests (at random among
// equals). nil when no candidate within the bound was sent even the first block: the caller then
// takes least request. This is the prefix scorer of the Gateway API Inference Extension reduced
// to what one proxy knows: the prompts it sent each pod stand in for the pod's prefix cache.
func (p *Pool) scored(cands []*Endpoint, blocks []uint64) (*Endpoint, int) {
	limit := p.limit(cands)
	var best *Endpoint
	bestN, ties := 0, 0
	for _, e := range cands {
		if e.Outstanding()+1 > limit {
			continue
		}
		n := e.sent.match(blocks)
		switch {
		case n == 0 || n < bestN:
			continue
		case n > bestN || e.Outstanding() < best.Outstanding():
			best, bestN, ties = e, n, 1
		case e.Outstanding() == best.Outstanding():
			if ties++; p.intN(ties) == 0 {
				best = e
			}
		}
	}
	return best, bestN
}

// bounded walks the ring from key and takes the first candidate whose load, with this request,
// stays within the limit; when none does, the least loaded candidate.
func (p *Pool) bounded(s *snapshot, cands []*Endpoint, key uint64) *Endpoint {
	limit := p.limit(cands)
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
