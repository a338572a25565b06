/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package benchbalance measures the router-proxy's pod choice (internal/routerproxy/balance) on
// simulated in-process pods: each pod serves a few requests at a time (its batch slots), queues
// the rest, and keeps a prefix (KV) cache of prompt blocks: a request takes a fixed decode time
// plus a prefill time per block of its prompt that is not in the pod's cache. Requests are real
// chat completions bodies, arriving open-loop (Poisson); the prefix scorer chooses from the same
// blocks the proxy computes (internal/routerproxy/prefix). `make bench-balancing` runs it
// (cmd/bench-balancing).
package benchbalance

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/prefix"
)

// Policy is how a request's pod is chosen.
type Policy string

// Policies compared.
const (
	// RoundRobin is what a ClusterIP Service gives a proxy: kube-proxy balances connections,
	// and with about one connection per request in flight every pod gets the same share of
	// requests whatever its speed. Request-level round robin is the best case of that (iptables
	// mode picks at random, which is no better).
	RoundRobin   Policy = "round robin (ClusterIP)"
	LeastRequest Policy = "least request"
	// PrefixRing is PrefixAffinity before the prefix scorer: one hash of the leading messages'
	// raw JSON (first 4 KB) on a consistent-hash ring with bounded loads.
	PrefixRing Policy = "prefix affinity, ring (before)"
	// PrefixScorer is PrefixAffinity now: the pod within the load bound that was sent the
	// longest prefix of the prompt's blocks.
	PrefixScorer Policy = "prefix affinity, scorer (now)"
)

// Policies in report order.
var Policies = []Policy{RoundRobin, LeastRequest, PrefixRing, PrefixScorer}

// Options of a run.
type Options struct {
	Pods  int
	Slots int // requests a pod serves at once; the rest queue
	// Hit is the service time of a request whose whole prompt is in the pod's cache (its decode);
	// Prefill is added per block of the prompt that is not.
	Hit, Prefill time.Duration
	// CacheBlocks is how many prompt blocks a pod's cache holds (LRU).
	CacheBlocks int
	// Popular workload: Prefixes system prompts of PromptBlocks blocks, Zipf exponent ZipfS.
	Prefixes     int
	PromptBlocks int
	ZipfS        float64
	// Conversations workload: SystemPrompts system prompts of SystemBytes bytes and more, Users
	// users, Turns turns per conversation.
	SystemPrompts, SystemBytes, Users, Turns int
	// Rate is the arrival rate (requests per second) for Duration.
	Rate     float64
	Duration time.Duration
	// Drain bounds the wait for the requests still queued after Duration; those left are counted
	// with the time they had waited (a lower bound) and reported.
	Drain time.Duration
	Seed  uint64
	// Rounds of every policy, interleaved; the round with the median p99 is reported.
	Rounds int
	// LoadFactor is c of prefix affinity's bounded loads (balance.Pool.LoadFactor).
	LoadFactor float64
}

// Scenario is one pod set and workload: SlowFactor multiplies the service times of pod 0 (1 for
// none).
type Scenario struct {
	Name       string
	SlowFactor int
	Workload   Workload
}

// Result of one policy in one scenario.
type Result struct {
	Scenario   string
	Policy     Policy
	Requests   int
	Unfinished int // still queued when Drain ran out
	Throughput float64
	P50, P99   time.Duration
	// HitRatio is the prompt blocks found in the pod's cache over all prompt blocks served.
	HitRatio float64
	PerPod   []int // requests served per pod
	Rounds   int
}

// pod is a simulated inference pod.
type pod struct {
	slots          chan struct{}
	hit, prefill   time.Duration
	mu             sync.Mutex
	cache          *list.List // of block hashes, front most recent
	index          map[uint64]*list.Element
	cacheSize      int
	served         atomic.Int64
	blocks, cached atomic.Int64
	ep             *balance.Endpoint
}

// lookup is how many of the prompt's blocks, from the first, the pod's cache holds; then it
// holds them all, as a model server's prefix cache does after the prefill. The blocks go in last
// first, so the cache forgets a prompt from its end.
func (p *pod) lookup(blocks []uint64) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < len(blocks) && p.index[blocks[n]] != nil {
		n++
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		if e, ok := p.index[blocks[i]]; ok {
			p.cache.MoveToFront(e)
			continue
		}
		p.index[blocks[i]] = p.cache.PushFront(blocks[i])
		if p.cache.Len() > p.cacheSize {
			old := p.cache.Back()
			p.cache.Remove(old)
			delete(p.index, old.Value.(uint64))
		}
	}
	return n
}

// serve queues for a slot, then takes the decode time and the prefill of the blocks not cached.
// It gives up queueing when ctx ends (the run's drain ran out).
func (p *pod) serve(ctx context.Context, blocks []uint64) bool {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	n := p.lookup(blocks)
	p.blocks.Add(int64(len(blocks)))
	p.cached.Add(int64(n))
	time.Sleep(p.hit + p.prefill*time.Duration(len(blocks)-n))
	<-p.slots
	p.served.Add(1)
	return true
}

// Run runs every policy on scenario with the same arrival sequence, Rounds times with the
// policies interleaved, and keeps each policy's round with the median p99 (a shared machine
// stalls now and then; the median round is the typical one).
func Run(ctx context.Context, o Options, sc Scenario) ([]Result, error) {
	h := prefix.NewHasher(prefix.DefaultBlockBytes, prefix.DefaultMaxBlocks)
	reqs := arrivals(o, sc.Workload, h)
	rounds := make([][]Result, len(Policies))
	for range max(o.Rounds, 1) {
		for i, pol := range Policies {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rounds[i] = append(rounds[i], runOne(o, sc, pol, reqs))
		}
	}
	out := make([]Result, len(Policies))
	for i, rs := range rounds {
		slices.SortFunc(rs, func(a, b Result) int { return int(a.P99 - b.P99) })
		out[i] = rs[len(rs)/2]
		out[i].Rounds = len(rs)
	}
	return out, nil
}

func runOne(o Options, sc Scenario, pol Policy, reqs []request) Result {
	pods := make([]*pod, o.Pods)
	pool := &balance.Pool{Threshold: 1 << 30, LoadFactor: o.LoadFactor}
	addrs := make([]string, o.Pods)
	for i := range pods {
		addrs[i] = fmt.Sprintf("192.0.2.%d:8000", i+1)
	}
	pool.Update(addrs)
	byAddr := map[*balance.Endpoint]*pod{}
	for i, ep := range pool.Endpoints() {
		f := 1
		if i == 0 && sc.SlowFactor > 1 {
			f = sc.SlowFactor
		}
		pods[i] = &pod{slots: make(chan struct{}, o.Slots), hit: o.Hit * time.Duration(f), prefill: o.Prefill * time.Duration(f),
			cache: list.New(), index: map[uint64]*list.Element{}, cacheSize: o.CacheBlocks, ep: ep}
		byAddr[ep] = pods[i]
	}

	var (
		rr      atomic.Uint64
		mu      sync.Mutex
		lat     []time.Duration
		wg      sync.WaitGroup
		pending atomic.Int64
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var lastDone atomic.Int64
	for _, a := range reqs {
		if d := time.Until(start.Add(a.at)); d > 0 {
			time.Sleep(d)
		}
		var p *pod
		switch pol {
		case RoundRobin:
			p = pods[rr.Add(1)%uint64(len(pods))]
		case LeastRequest:
			p = byAddr[pool.Pick(balance.Request{}, time.Now())]
		case PrefixRing:
			p = byAddr[pool.Pick(balance.Request{Key: a.ringKey, HasKey: true}, time.Now())]
		case PrefixScorer:
			p = byAddr[pool.Pick(balance.Request{Blocks: a.blocks}, time.Now())]
			pool.Remember(p.ep, a.blocks)
		}
		arrived := time.Now()
		p.ep.Acquire()
		pending.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.ep.Release()
			if !p.serve(ctx, a.blocks) {
				return
			}
			pending.Add(-1)
			now := time.Now()
			lastDone.Store(now.UnixNano())
			mu.Lock()
			lat = append(lat, now.Sub(arrived))
			mu.Unlock()
		}()
	}
	arrivalsEnd := time.Now()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(o.Drain):
	}
	mu.Lock()
	res := Result{Scenario: sc.Name, Policy: pol, Requests: len(lat), Unfinished: int(pending.Load())}
	// Requests still queued count with the time they waited so far: their latency is at least that.
	for range res.Unfinished {
		lat = append(lat, time.Since(arrivalsEnd))
	}
	all := slices.Clone(lat)
	mu.Unlock()
	slices.Sort(all)
	res.P50, res.P99 = all[len(all)*50/100], all[len(all)*99/100]
	end := time.Unix(0, lastDone.Load())
	res.Throughput = float64(res.Requests) / end.Sub(start).Seconds()
	var blocks, cached int64
	for _, p := range pods {
		blocks += p.blocks.Load()
		cached += p.cached.Load()
		res.PerPod = append(res.PerPod, int(p.served.Load()))
	}
	if blocks > 0 {
		res.HitRatio = float64(cached) / float64(blocks)
	}
	// Requests still queued give up; those being served finish their sleep. Runs never overlap.
	cancel()
	<-done
	return res
}
