/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
)

// bodyBudget bounds the bytes of request bodies the proxy holds at once (docs/router.md,
// "Memory"): a request is admitted before its body is read, or refused with 503. Not
// golang.org/x/sync/semaphore: the gauge and the refusal's message need the bytes held.
//
// Note: it counts two things. held is what requests hold: the declared lengths of the bodies
// admitted (what their buffers may grow to) and the buffers of the others. real is what their
// buffers are now. A body with a declared length larger than its first buffer is admitted on
// held, so that an honest burst of large uploads gets 503 before a byte is read rather than all
// of them starting and failing mid-body; a small body (a declared length within the first buffer)
// is admitted on real alone, so a client that declares large bodies and sends nothing holds no
// room a small request needs. real never exceeds size: a buffer that would grow past it waits
// (waitReal) for the small requests to let go of theirs.
type bodyBudget struct {
	size int64
	held atomic.Int64
	real atomic.Int64
	// freed is closed (and replaced) whenever real falls, for the bodies waiting to grow.
	mu    sync.Mutex
	freed chan struct{}
}

// reserve adds n to c when c stays within size, and says whether it did.
func (b *bodyBudget) reserve(c *atomic.Int64, n int64) bool {
	for {
		h := c.Load()
		if h+n > b.size {
			return false
		}
		if c.CompareAndSwap(h, h+n) {
			return true
		}
	}
}

// take holds n more bytes of both held and real when they fit, and says whether they did.
func (b *bodyBudget) take(n int64) bool {
	if !b.reserve(&b.real, n) {
		return false
	}
	b.held.Add(n)
	return true
}

func (b *bodyBudget) give(n int64) { b.giveBoth(n, n) }

// giveBoth lets go of held bytes of held and real bytes of real.
func (b *bodyBudget) giveBoth(held, real int64) {
	b.held.Add(-held)
	if real > 0 {
		b.real.Add(-real)
		b.mu.Lock()
		if b.freed != nil {
			close(b.freed)
			b.freed = nil
		}
		b.mu.Unlock()
	}
}

// waitReal takes n more bytes of real, waiting until they fit or done closes; it says whether
// they were taken.
func (b *bodyBudget) waitReal(n int64, done <-chan struct{}) bool {
	for {
		b.mu.Lock()
		if b.reserve(&b.real, n) {
			b.mu.Unlock()
			return true
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-done:
			return false
		}
	}
}

// BodyMemoryBudget is the budget of body bytes in flight the proxy keeps to.
func (p *Proxy) BodyMemoryBudget() int64 { return p.budget.size }

// Sizing of the default budget from the Go memory limit (docs/router.md, "Memory").
const (
	// proxyBaseBytes is what the proxy uses with no body in flight (runtime, metrics, idle
	// connections, the prefix LRUs), rounded up.
	proxyBaseBytes = 40 << 20
	// NoLimitBodyBudget is the budget when the process has no memory limit.
	NoLimitBodyBudget = 256 << 20
)

// DefaultBodyBudget is the budget of body bytes in flight for a Go memory limit (GOMEMLIMIT, as
// the binary set it): half of what the limit leaves beyond the proxy's base. Half, because a body
// grows by doubling (readBody), so it leaves up to its own size in smaller buffers for the
// collector, and both must fit under the limit without the collector running all the time.
func DefaultBodyBudget(goMemLimit int64) int64 {
	if goMemLimit <= 0 || goMemLimit == math.MaxInt64 {
		return NoLimitBodyBudget
	}
	return max((goMemLimit-proxyBaseBytes)/2, 1<<20)
}

// bodyHold is what one request holds of the budget: n of held, and real of real (its buffer).
type bodyHold struct {
	b       *bodyBudget
	n, real int64
	// wait bounds how long the buffer waits to grow within its reservation (the body's read
	// deadline, or the client leaving; cancel lets go of it); nil: it does not wait.
	wait   <-chan struct{}
	cancel func()
}

// cover makes the hold room for a buffer of n bytes, and says whether the budget had them: within
// the declared length held at admission it takes real room only (waiting for it until wait
// closes), beyond it both.
func (h *bodyHold) cover(n int64) bool {
	if n > h.n {
		if !h.b.reserve(&h.b.held, n-h.n) {
			return false
		}
		h.n = n
	}
	if n <= h.real {
		return true
	}
	if !h.b.reserve(&h.b.real, n-h.real) && (h.wait == nil || !h.b.waitReal(n-h.real, h.wait)) {
		return false
	}
	h.real = n
	return true
}

// release gives the hold back; once its body is let go of (relay) or the request ends.
func (h *bodyHold) release() {
	if h == nil {
		return
	}
	if h.n > 0 || h.real > 0 {
		h.b.giveBoth(h.n, h.real)
		h.n, h.real = 0, 0
	}
	if h.cancel != nil {
		h.cancel()
	}
}

// bodyRetryAfter is the Retry-After of a refusal, in seconds: the bodies held are let go of as
// soon as their answers start, which for a chat is within a second or two.
const bodyRetryAfter = "2"

// admitBody holds the body's room in the budget before a byte of it is read: a body whose
// declared length fits its first buffer takes that buffer of real room; a larger declared length
// (+1) is held, with its first buffer of real room; a body of unknown length holds its first
// buffer (readBody takes more as it grows).
func (p *Proxy) admitBody(w http.ResponseWriter, r *http.Request) (*bodyHold, *apiError) {
	want := int64(firstBodyBuffer)
	if cl := r.ContentLength; cl >= 0 {
		if cl > p.o.MaxBodyBytes {
			return nil, p.tooLarge()
		}
		want = cl + 1
	}
	if want > p.budget.size {
		return nil, invalidRequest(http.StatusRequestEntityTooLarge, "request_too_large", "", "The request body is larger than this router's memory budget for request bodies ("+itoa(p.budget.size)+" bytes; --body-memory-budget).")
	}
	h := &bodyHold{b: p.budget}
	if want <= firstBodyBuffer {
		if !p.budget.take(want) {
			return nil, p.overloaded(w)
		}
		h.n, h.real = want, want
		return h, nil
	}
	if !p.budget.reserve(&p.budget.held, want) {
		return nil, p.overloaded(w)
	}
	h.n = want
	ctx, cancel := r.Context(), func() {}
	if p.o.BodyReadTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, p.o.BodyReadTimeout)
	}
	h.wait, h.cancel = ctx.Done(), cancel
	if !h.cover(firstBodyBuffer) {
		h.release()
		return nil, p.overloaded(w)
	}
	return h, nil
}

// overloaded is the refusal of a body the budget cannot hold now: 503 with Retry-After, which
// the OpenAI SDKs wait for before they retry.
func (p *Proxy) overloaded(w http.ResponseWriter) *apiError {
	p.clients.refused.Inc()
	w.Header().Set("Retry-After", bodyRetryAfter)
	return serverError(http.StatusServiceUnavailable, "server_overloaded", "This router holds as many request bodies as its memory allows ("+itoa(p.budget.held.Load())+" of "+itoa(p.budget.size)+" bytes); retry after "+bodyRetryAfter+" s.")
}
