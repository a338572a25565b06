/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"fmt"
	"testing"
	"time"
)

func pool(n int) *Pool {
	p := &Pool{Threshold: 3, Cooldown: time.Minute}
	var addrs []string
	for i := range n {
		addrs = append(addrs, fmt.Sprintf("192.0.2.%d:8000", i+1))
	}
	p.Update(addrs)
	return p
}

func byAddr(p *Pool, addr string) *Endpoint {
	for _, e := range p.Endpoints() {
		if e.Addr == addr {
			return e
		}
	}
	return nil
}

// Power of two choices never picks the busiest of two pods: with one pod far busier than the
// others it is picked only when both choices... never, as the other choice is always less busy.
func TestLeastRequestAvoidsTheBusyPod(t *testing.T) {
	p := pool(4)
	busy := byAddr(p, "192.0.2.1:8000")
	for range 10 {
		busy.Acquire()
	}
	now := time.Now()
	for range 1000 {
		if e := p.Pick(Request{}, now); e == busy {
			t.Fatal("picked the pod with 10 outstanding requests over an idle one")
		}
	}
}

// Outstanding counts survive an update for pods that stay; a removed pod is never picked again.
func TestUpdateKeepsCountersAndDropsRemovedPods(t *testing.T) {
	p := pool(3)
	e := byAddr(p, "192.0.2.2:8000")
	e.Acquire()
	p.Update([]string{"192.0.2.2:8000", "192.0.2.3:8000"})
	if got := byAddr(p, "192.0.2.2:8000"); got != e || got.Outstanding() != 1 {
		t.Fatalf("the staying pod lost its counter: %+v", got)
	}
	now := time.Now()
	for range 1000 {
		for _, r := range []Request{{}, {HasKey: true, Key: 42}} {
			if got := p.Pick(r, now); got.Addr == "192.0.2.1:8000" {
				t.Fatal("picked a removed pod")
			}
		}
	}
}

// Threshold failures in a row eject a pod for the cooldown; a success in between resets the run.
func TestEjection(t *testing.T) {
	p := pool(2)
	bad := byAddr(p, "192.0.2.1:8000")
	now := time.Now()
	p.Failed(bad, now)
	p.Failed(bad, now)
	p.Succeeded(bad)
	if p.Failed(bad, now) || p.Failed(bad, now) {
		t.Fatal("ejected before three failures in a row")
	}
	if !p.Failed(bad, now) {
		t.Fatal("not ejected after three failures in a row")
	}
	for range 200 {
		if p.Pick(Request{}, now) == bad {
			t.Fatal("picked an ejected pod")
		}
	}
	good := byAddr(p, "192.0.2.2:8000")
	if got := p.Pick(Request{Tried: []*Endpoint{good}}, now); got != nil {
		t.Fatalf("picked %v: the only other pod is ejected", got.Addr)
	}
	if got := p.Pick(Request{Tried: []*Endpoint{good}, AllowEjected: true}, now); got != bad {
		t.Fatal("a last option may take an ejected pod")
	}
	if got := p.Pick(Request{}, now.Add(2*time.Minute)); got == nil {
		t.Fatal("nothing after the cooldown")
	}
	later := now.Add(2 * time.Minute)
	seen := false
	for range 200 {
		seen = seen || p.Pick(Request{}, later) == bad
	}
	if !seen {
		t.Fatal("the pod never came back after its cooldown")
	}
}

// A retry never goes to a pod the request already failed on.
func TestTriedPodsAreSkipped(t *testing.T) {
	p := pool(3)
	now := time.Now()
	r := Request{HasKey: true, Key: 7}
	for range 3 {
		e := p.Pick(r, now)
		if e == nil {
			t.Fatal("ran out of pods early")
		}
		for _, tried := range r.Tried {
			if tried == e {
				t.Fatal("picked a pod the request already tried")
			}
		}
		r.Tried = append(r.Tried, e)
	}
	if p.Pick(r, now) != nil || p.Remaining(r, now) != 0 {
		t.Fatal("a fourth pick out of three pods")
	}
}

// The same key goes to the same pod while its load is within the bound, then elsewhere; keys
// spread over all pods.
func TestAffinityWithBoundedLoads(t *testing.T) {
	p := pool(4)
	now := time.Now()
	home := p.Pick(Request{HasKey: true, Key: Hash([]byte("system prompt A"))}, now)
	for range 100 {
		if got := p.Pick(Request{HasKey: true, Key: Hash([]byte("system prompt A"))}, now); got != home {
			t.Fatal("the same key went to another pod while all were idle")
		}
	}
	// Load the home pod past c * mean: total 4 outstanding, mean with this request 5/4, bound 2.
	home.Acquire()
	home.Acquire()
	home.Acquire()
	other := byAddr(p, "192.0.2.1:8000")
	if other == home {
		other = byAddr(p, "192.0.2.2:8000")
	}
	other.Acquire()
	if got := p.Pick(Request{HasKey: true, Key: Hash([]byte("system prompt A"))}, now); got == home {
		t.Fatal("the key's pod took a request beyond 1.25 times the mean load")
	}
	spread := map[*Endpoint]int{}
	q := pool(4)
	for i := range 4000 {
		spread[q.Pick(Request{HasKey: true, Key: Hash(fmt.Appendf(nil, "prompt %d", i))}, now)]++
	}
	for e, n := range spread {
		if n < 600 || n > 1400 {
			t.Errorf("%s got %d of 4000 keys: the ring is lopsided", e.Addr, n)
		}
	}
	if len(spread) != 4 {
		t.Errorf("keys reached %d of 4 pods", len(spread))
	}
}

// A pod whose readiness flaps (it leaves the set and comes back at the same address) keeps its
// requests in flight and its ejection; a pod gone and idle is forgotten.
func TestPoolKeepsCountersAcrossAFlap(t *testing.T) {
	p := &Pool{Threshold: 1, Cooldown: time.Minute}
	p.Update([]string{"a:1", "b:1", "c:1"})
	eps := p.Endpoints()
	a, b := eps[0], eps[1]
	for range 10 {
		a.Acquire()
	}
	p.Failed(b, time.Now())
	p.Update([]string{"c:1"})
	p.Update([]string{"a:1", "b:1", "c:1"})
	eps = p.Endpoints()
	if eps[0] != a || eps[0].Outstanding() != 10 {
		t.Fatalf("a came back with %d in flight, want its 10", eps[0].Outstanding())
	}
	if eps[1] != b || !eps[1].Health().Cooling(time.Now()) {
		t.Fatal("b came back without its ejection")
	}
	for range 10 {
		a.Release()
	}
	p.Update([]string{"c:1"})
	p.Update([]string{"c:1"})
	if _, kept := p.away["a:1"]; kept {
		t.Fatal("an idle pod that left is still kept")
	}
}

// Every random choice of a pick (least request's two pods, the prefix and engine-aware scorers'
// ties) comes from Pool.IntN when it is set: a source that always draws the last index gives the
// same pod every time where the global source would spread the picks.
func TestPickDrawsItsChoicesFromIntN(t *testing.T) {
	p := pool(4)
	p.IntN = func(n int) int { return n - 1 }
	eps := p.Endpoints()
	now := time.Now()
	blocks := []uint64{1, 2}
	p.Remember(eps[1], blocks)
	p.Remember(eps[2], blocks)
	report(p, now, EngineLoad{}, EngineLoad{}, EngineLoad{}, EngineLoad{})
	for _, c := range []struct {
		name string
		r    Request
		want *Endpoint
	}{
		{"least request", Request{}, eps[3]},                   // i = 3, j = 2: equal loads keep i's
		{"prefix scorer", Request{Blocks: blocks}, eps[1]},     // the tie of eps[1] and eps[2] keeps the first
		{"engine-aware", Request{Engine: testScoring}, eps[0]}, // the tie of four keeps the first
		{"engine-aware, prefix", Request{Blocks: blocks, Engine: testScoring}, eps[1]},
	} {
		if got := picks(p, c.r, now, 50); got[c.want] != 50 {
			byAddr := map[string]int{}
			for e, n := range got {
				byAddr[e.Addr] = n
			}
			t.Errorf("%s: picks %v, want all 50 on %s", c.name, byAddr, c.want.Addr)
		}
	}
}
