/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"math"
	"net/http"
	"sync/atomic"
)

// bodyBudget bounds the bytes of request bodies the proxy holds at once (docs/router.md,
// "Memory"): a request is admitted before its body is read, or refused with 503. Not
// golang.org/x/sync/semaphore: the gauge and the refusal's message need the bytes held.
type bodyBudget struct {
	size int64
	held atomic.Int64
}

// take holds n more bytes when they fit, and says whether they did.
func (b *bodyBudget) take(n int64) bool {
	for {
		h := b.held.Load()
		if h+n > b.size {
			return false
		}
		if b.held.CompareAndSwap(h, h+n) {
			return true
		}
	}
}

func (b *bodyBudget) give(n int64) { b.held.Add(-n) }

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

// bodyHold is what one request holds of the budget.
type bodyHold struct {
	b *bodyBudget
	n int64
}

// cover makes the hold at least n bytes, and says whether the budget had them.
func (h *bodyHold) cover(n int64) bool {
	if n <= h.n {
		return true
	}
	if !h.b.take(n - h.n) {
		return false
	}
	h.n = n
	return true
}

// release gives the hold back; once its body is let go of (relay) or the request ends.
func (h *bodyHold) release() {
	if h != nil && h.n > 0 {
		h.b.give(h.n)
		h.n = 0
	}
}

// bodyRetryAfter is the Retry-After of a refusal, in seconds: the bodies held are let go of as
// soon as their answers start, which for a chat is within a second or two.
const bodyRetryAfter = "2"

// admitBody holds the body's room in the budget before a byte of it is read: its declared length
// (+1), or for a body of unknown length its first buffer (readBody takes more as it grows).
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
	if !h.cover(want) {
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
