/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import "sync/atomic"

// Prefill is one request's prompt work counted against its pod until its first token.
type Prefill struct {
	e      *Endpoint
	blocks int64
	done   atomic.Bool
}

// StartPrefill counts blocks of prompt the pod will have to prefill for a request sent to e;
// call Done on the Prefill when its first token (or the end of its response) is seen.
//
// Note: an engine's queue gauges count requests, not their work: a pod with two 100k-token
// prompts to prefill reports the queue of a pod with two short chats. The proxy knows each
// prompt's size and which of its blocks it sent the pod before; what it sent and has not seen
// answered yet is the work the pod still owes this replica before the next request's first token.
func (e *Endpoint) StartPrefill(blocks int) *Prefill {
	f := &Prefill{e: e, blocks: int64(max(blocks, 0))}
	e.prefill.Add(f.blocks)
	return f
}

// Done ends the count (at most once).
func (f *Prefill) Done() {
	if f != nil && f.done.CompareAndSwap(false, true) {
		f.e.prefill.Add(-f.blocks)
	}
}

// Prefilling is the prompt blocks of e's requests from this proxy that have had no first token.
func (e *Endpoint) Prefilling() int64 { return e.prefill.Load() }
