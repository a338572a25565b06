/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"runtime"
	"testing"
	"time"
)

// chain is n made-up block hashes starting at from (prompts sharing a start share their first
// hashes, as chain hashes do).
func chain(from uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = from + uint64(i)
	}
	return out
}

func join(a, b []uint64) []uint64 { return append(append([]uint64(nil), a...), b...) }

// The pod that was sent the longest prefix of the prompt's blocks gets it, whatever the others
// were sent.
func TestLongestPrefixWins(t *testing.T) {
	p := pool(4)
	eps := p.Endpoints()
	system := chain(1000, 8)
	p.Remember(eps[0], system[:2])
	p.Remember(eps[1], join(system, chain(5000, 4))) // the same system prompt and this conversation
	p.Remember(eps[2], system[:6])
	p.Remember(eps[3], chain(9000, 20)) // another prompt, longer
	now := time.Now()
	for range 100 {
		e, n := p.Choose(Request{Blocks: join(system, chain(5000, 6))}, now)
		if e != eps[1] || n != 12 {
			t.Fatalf("picked %s with %d blocks matched, want %s with 12", e.Addr, n, eps[1].Addr)
		}
	}
	if e, n := p.Choose(Request{Blocks: join(system, chain(7000, 3))}, now); e != eps[1] || n != 8 {
		t.Fatalf("another conversation on the same system prompt went to %s (%d blocks): want %s, the pod with all of the system prompt", e.Addr, n, eps[1].Addr)
	}
}

// A pod past the load bound does not get the request, however long its match: the next best
// within the bound does; when no pod within the bound matches, least request decides.
func TestLoadBoundOverridesPrefix(t *testing.T) {
	p := pool(4)
	eps := p.Endpoints()
	prompt := chain(1, 10)
	p.Remember(eps[0], prompt)
	p.Remember(eps[1], prompt[:3])
	// 4 in flight on eps[0]: bound ceil(1.25 * 5 / 4) = 2.
	for range 4 {
		eps[0].Acquire()
	}
	now := time.Now()
	for range 100 {
		if e, n := p.Choose(Request{Blocks: prompt}, now); e != eps[1] || n != 3 {
			t.Fatalf("picked %s (%d blocks): the best pod is over the bound, want the next best %s", e.Addr, n, eps[1].Addr)
		}
	}
	eps[1].Acquire()
	eps[1].Acquire() // bound ceil(1.25 * 7 / 4) = 3: eps[1] at 2+1 is within
	eps[1].Acquire() // bound ceil(1.25 * 8 / 4) = 3: eps[1] at 3+1 is over
	idle := 0
	for range 100 {
		e := p.Pick(Request{Blocks: prompt}, now)
		if e == eps[0] {
			t.Fatalf("picked %s: it is over the bound and the busiest pod", e.Addr)
		}
		if e == eps[2] || e == eps[3] {
			idle++
		}
	}
	if idle < 50 {
		t.Errorf("only %d of 100 went to the idle pods once both matching pods were over the bound", idle)
	}
}

// Among pods with the same longest prefix, the one with fewer requests in flight; with no match
// anywhere, least request (a busy pod is never chosen over an idle one).
func TestTiesAndNoMatchGoToLeastRequest(t *testing.T) {
	p := pool(4)
	p.LoadFactor = 100 // no bound in the way
	eps := p.Endpoints()
	prompt := chain(1, 6)
	for _, e := range eps[:3] {
		p.Remember(e, prompt[:4])
	}
	eps[0].Acquire()
	eps[0].Acquire()
	eps[1].Acquire()
	now := time.Now()
	for range 100 {
		if e, n := p.Choose(Request{Blocks: prompt}, now); e != eps[2] || n != 4 {
			t.Fatalf("picked %s (%d blocks) among three pods matching 4 blocks, want the idle %s", e.Addr, n, eps[2].Addr)
		}
	}
	for range 10 {
		eps[3].Acquire()
	}
	for range 1000 {
		if e, n := p.Choose(Request{Blocks: chain(777, 5)}, now); e == eps[3] || n != 0 {
			t.Fatalf("an unmatched prompt went to %s (%d blocks), the pod with 10 requests in flight", e.Addr, n)
		}
	}
}

// An x-session-id key pins the request to its pod on the ring, whatever the blocks say.
func TestSessionKeyPinsOverPrefix(t *testing.T) {
	p := pool(4)
	now := time.Now()
	home := p.Pick(Request{HasKey: true, Key: Hash([]byte("session\x00s1"))}, now)
	var other *Endpoint
	for _, e := range p.Endpoints() {
		if e != home {
			other = e
		}
	}
	prompt := chain(1, 10)
	p.Remember(other, prompt)
	for range 50 {
		if e := p.Pick(Request{HasKey: true, Key: Hash([]byte("session\x00s1")), Blocks: prompt}, now); e != home {
			t.Fatalf("a session went to %s, the pod with its prefix, not its pinned %s", e.Addr, home.Addr)
		}
	}
}

// The LRU keeps at most its capacity, forgets the least recently sent first, and forgets a
// prompt from its end: its first blocks, sent last, stay matchable.
func TestBlocksLRU(t *testing.T) {
	var l blocks
	l.add(chain(100, 6), 8)
	if l.match(chain(100, 6)) != 6 || l.len() != 6 {
		t.Fatalf("matched %d of 6, holds %d", l.match(chain(100, 6)), l.len())
	}
	l.add(chain(200, 4), 8) // 10 blocks into 8: the two oldest go, the end of the first prompt
	if l.len() != 8 {
		t.Fatalf("holds %d blocks, capacity 8", l.len())
	}
	if n := l.match(chain(100, 6)); n != 4 {
		t.Errorf("first prompt: %d blocks still match, want its first 4 (its last 2 were evicted)", n)
	}
	if n := l.match(chain(200, 4)); n != 4 {
		t.Errorf("second prompt: %d of 4 match", n)
	}
	l.add(chain(100, 2), 8) // touching the first prompt's start makes it recent again
	l.add(chain(300, 4), 8)
	if l.match(chain(100, 2)) != 2 || l.match(chain(200, 4)) != 0 && l.match(chain(200, 4)) > 2 {
		t.Errorf("recently sent blocks were evicted: first %d, second %d", l.match(chain(100, 2)), l.match(chain(200, 4)))
	}
	for i := range 1000 {
		l.add(chain(uint64(10000+i*50), 7), 8)
	}
	if l.len() != 8 || len(l.entries) != 8 || len(l.index) != 8 {
		t.Fatalf("after 7000 blocks: %d blocks, %d entries, %d in the index, capacity 8", l.len(), len(l.entries), len(l.index))
	}
}

// TestBlocksMemory measures what a full pod LRU costs, the figure docs/router-balancing.md
// states: it must stay under 64 bytes a block.
func TestBlocksMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := &blocks{}
	for i := range DefaultBlocksPerPod / 64 {
		l.add(chain(uint64(i)*1000, 64), DefaultBlocksPerPod)
	}
	l.add(chain(1<<40, 4096), DefaultBlocksPerPod) // past capacity
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / DefaultBlocksPerPod
	t.Logf("%d blocks: %.0f bytes a block, %.0f KiB a pod", l.len(), per, per*DefaultBlocksPerPod/1024)
	if l.len() != DefaultBlocksPerPod || per > 64 {
		t.Errorf("%d blocks at %.0f bytes each", l.len(), per)
	}
	runtime.KeepAlive(l)
}
