/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"container/list"
	"fmt"
	"slices"
	"strings"
	"time"
)

// enginePod is a simulated model server on a virtual clock, with what makes an engine's own
// signals matter: batch slots (more requests wait in its queue), a KV cache of fixed size that
// keeps the blocks of the prompts it served (an LRU) and pins those of the requests running, a
// prefill cost per prompt block not cached, and the three gauges a vLLM server exports.
//
// Note: as vLLM's scheduler, the pod admits a request only when its prompt's blocks fit beside
// those pinned by the running requests (evicting cached blocks nobody pins), else it waits, first
// in line; a prompt larger than the whole cache is cut to it. At its first token a request needs
// OutputBlocks more for its answer: when they do not fit, the pod preempts the request it
// admitted last (its blocks are dropped; it waits again and is prefilled again), as vLLM does in
// recompute mode. Those are the preemptions reported.
type enginePod struct {
	slots    int
	capacity int
	prefill  time.Duration
	decode   time.Duration

	queue   []*job
	running []*job
	cache   map[uint64]*list.Element // of *kvBlock
	lru     *list.List               // front most recent
	pinned  int                      // blocks pinned by a running request

	outputBlocks int
	nextOut      uint64

	// What the run reports.
	served, blocks, cached, preemptions int
}

type kvBlock struct {
	hash uint64
	pins int
}

func newEnginePod(slots, capacity, outputBlocks int, prefill, decode time.Duration) *enginePod {
	return &enginePod{slots: slots, capacity: capacity, outputBlocks: outputBlocks, prefill: prefill, decode: decode, cache: map[uint64]*list.Element{}, lru: list.New()}
}

// metricsPage is what the pod's /metrics says, under vLLM's names, in Prometheus text format.
func (p *enginePod) metricsPage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"llama-3\"} %d\n", len(p.running))
	fmt.Fprintf(&b, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"llama-3\"} %d\n", len(p.queue))
	fmt.Fprintf(&b, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"llama-3\"} %g\n", float64(p.pinned)/float64(p.capacity))
	return b.String()
}

// admit starts queued requests while a slot is free; the caller schedules the end of the
// prefill and of the decode of each running request whose gen it has not scheduled yet.
func (p *enginePod) admit() {
	for len(p.running) < p.slots && len(p.queue) > 0 {
		j := p.queue[0]
		kv := j.req.kv
		if len(kv) > p.capacity-p.outputBlocks {
			kv = kv[:p.capacity-p.outputBlocks]
		}
		need := func() int {
			n := 0
			for _, h := range kv {
				if p.cache[h] == nil {
					n++
				}
			}
			return n
		}
		for p.lru.Len()+need() > p.capacity && p.evictOne() {
		}
		if p.lru.Len()+need() > p.capacity {
			return // it waits for room, first in line
		}
		p.queue = p.queue[1:]
		hit := 0
		for hit < len(kv) && p.cache[kv[hit]] != nil {
			hit++
		}
		for i := len(kv) - 1; i >= 0; i-- { // the first block last: the cache forgets a prompt from its end
			p.pin(kv[i])
		}
		j.pinned = slices.Clone(kv)
		j.gen++
		j.prefill = p.prefill * time.Duration(len(kv)-hit)
		p.blocks += len(kv)
		p.cached += hit
		p.running = append(p.running, j)
	}
}

// pin puts h in the cache (most recent) and pins it.
func (p *enginePod) pin(h uint64) {
	e := p.cache[h]
	if e == nil {
		e = p.lru.PushFront(&kvBlock{hash: h})
		p.cache[h] = e
	} else {
		p.lru.MoveToFront(e)
	}
	if b := e.Value.(*kvBlock); b.pins == 0 {
		p.pinned++
		b.pins = 1
	} else {
		b.pins++
	}
}

// grow gives j, at its first token, the blocks of its answer: cached blocks nobody pins are
// evicted for them, then the request admitted last (not j) is preempted, until they fit.
func (p *enginePod) grow(j *job) {
	for p.lru.Len()+p.outputBlocks > p.capacity && (p.evictOne() || p.preemptOther(j)) {
	}
	for range p.outputBlocks {
		p.nextOut++
		h := p.nextOut | 1<<63
		p.pin(h)
		j.pinned = append(j.pinned, h)
	}
}

func (p *enginePod) preemptOther(j *job) bool {
	for i := len(p.running) - 1; i >= 0; i-- {
		if p.running[i] != j {
			p.preempt(i)
			return true
		}
	}
	return false
}

// evictOne drops the least recently used block no running request pins.
func (p *enginePod) evictOne() bool {
	for e := p.lru.Back(); e != nil; e = e.Prev() {
		if b := e.Value.(*kvBlock); b.pins == 0 {
			p.lru.Remove(e)
			delete(p.cache, b.hash)
			return true
		}
	}
	return false
}

// preempt stops running request i: its blocks no other running request pins are dropped,
// and it waits again, first.
func (p *enginePod) preempt(i int) {
	j := p.running[i]
	p.running = slices.Delete(p.running, i, i+1)
	for _, h := range j.pinned {
		if e := p.cache[h]; e != nil {
			if b := e.Value.(*kvBlock); b.pins > 0 {
				if b.pins--; b.pins == 0 {
					p.pinned--
					p.lru.Remove(e)
					delete(p.cache, h)
				}
			}
		}
	}
	j.pinned = nil
	j.gen++ // its scheduled events are void
	j.preempted = true
	p.preemptions++
	p.queue = append([]*job{j}, p.queue...)
}

// finish ends a running request: its blocks stay cached, unpinned.
func (p *enginePod) finish(j *job) {
	for i, r := range p.running {
		if r == j {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	for _, h := range j.pinned {
		if e := p.cache[h]; e != nil {
			if b := e.Value.(*kvBlock); b.pins > 0 {
				if b.pins--; b.pins == 0 {
					p.pinned--
				}
			}
		}
	}
	j.pinned = nil
	p.served++
}
