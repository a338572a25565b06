/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package benchbalance measures the router-proxy's pod choice (internal/routerproxy/balance) on
// simulated in-process pods: each pod serves a few requests at a time (its batch slots) with a
// service time per request, queues the rest, and keeps a prefix (KV) cache in which a hit is
// cheaper. Requests arrive open-loop (Poisson) with a prompt prefix drawn from a Zipf
// distribution. `make bench-balancing` runs it (cmd/bench-balancing).
package benchbalance

import (
	"container/list"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// Policy is how a request's pod is chosen.
type Policy string

// Policies compared.
const (
	// RoundRobin is what a ClusterIP Service gives a proxy: kube-proxy balances connections,
	// and with about one connection per request in flight every pod gets the same share of
	// requests whatever its speed. Request-level round robin is the best case of that (iptables
	// mode picks at random, which is no better).
	RoundRobin     Policy = "round robin (ClusterIP)"
	LeastRequest   Policy = "least request"
	PrefixAffinity Policy = "prefix affinity"
)

// Policies in report order.
var Policies = []Policy{RoundRobin, LeastRequest, PrefixAffinity}

// Options of a run.
type Options struct {
	Pods  int
	Slots int // requests a pod serves at once; the rest queue
	// Miss and Hit are the service times of a request whose prefix is not / is in the pod's cache.
	Miss, Hit time.Duration
	// CacheSize is how many prefixes a pod's cache holds (LRU).
	CacheSize int
	// Prefixes is the number of distinct prompt prefixes, drawn with Zipf exponent ZipfS.
	Prefixes int
	ZipfS    float64
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

// Scenario is one pod set: SlowFactor multiplies the service times of pod 0 (1 for none).
type Scenario struct {
	Name       string
	SlowFactor int
}

// Result of one policy in one scenario.
type Result struct {
	Scenario   string
	Policy     Policy
	Requests   int
	Unfinished int // still queued when Drain ran out
	Throughput float64
	P50, P99   time.Duration
	HitRatio   float64
	PerPod     []int // requests served per pod
	Rounds     int
}

// pod is a simulated inference pod.
type pod struct {
	slots     chan struct{}
	miss, hit time.Duration
	mu        sync.Mutex
	cache     *list.List // of prefix ids, front most recent
	index     map[int]*list.Element
	cacheSize int
	served    atomic.Int64
	hits      atomic.Int64
	ep        *balance.Endpoint
}

func (p *pod) lookup(prefix int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.index[prefix]; ok {
		p.cache.MoveToFront(e)
		return true
	}
	p.index[prefix] = p.cache.PushFront(prefix)
	if p.cache.Len() > p.cacheSize {
		old := p.cache.Back()
		p.cache.Remove(old)
		delete(p.index, old.Value.(int))
	}
	return false
}

// serve queues for a slot, then takes the service time of a hit or a miss. It gives up queueing
// when ctx ends (the run's drain ran out).
func (p *pod) serve(ctx context.Context, prefix int) bool {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	d := p.miss
	if p.lookup(prefix) {
		d = p.hit
		p.hits.Add(1)
	}
	time.Sleep(d)
	<-p.slots
	p.served.Add(1)
	return true
}

// Run runs every policy on scenario with the same arrival sequence, Rounds times with the
// policies interleaved, and keeps each policy's round with the median p99 (a shared machine
// stalls now and then; the median round is the typical one).
func Run(ctx context.Context, o Options, sc Scenario) ([]Result, error) {
	rounds := make([][]Result, len(Policies))
	for range max(o.Rounds, 1) {
		for i, pol := range Policies {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rounds[i] = append(rounds[i], runOne(o, sc, pol))
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

func runOne(o Options, sc Scenario, pol Policy) Result {
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
		pods[i] = &pod{slots: make(chan struct{}, o.Slots), miss: o.Miss * time.Duration(f), hit: o.Hit * time.Duration(f),
			cache: list.New(), index: map[int]*list.Element{}, cacheSize: o.CacheSize, ep: ep}
		byAddr[ep] = pods[i]
	}
	// The arrivals (offset from the start, prefix) are drawn before the run: every policy gets the
	// same sequence.
	type arrival struct {
		at     time.Duration
		prefix int
	}
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(o.Seed, 2)), o.ZipfS, 1, uint64(o.Prefixes-1))
	var arrivals []arrival
	for at := time.Duration(0); ; {
		at += time.Duration(rng.ExpFloat64() / o.Rate * float64(time.Second))
		if at >= o.Duration {
			break
		}
		arrivals = append(arrivals, arrival{at, int(zipf.Uint64())})
	}
	keys := make([]uint64, o.Prefixes)
	for i := range keys {
		keys[i] = balance.Hash(fmt.Appendf(nil, "system prompt %d", i))
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
	for _, a := range arrivals {
		if d := time.Until(start.Add(a.at)); d > 0 {
			time.Sleep(d)
		}
		prefix := a.prefix
		var p *pod
		switch pol {
		case RoundRobin:
			p = pods[rr.Add(1)%uint64(len(pods))]
		case LeastRequest:
			p = byAddr[pool.Pick(balance.Request{}, time.Now())]
		case PrefixAffinity:
			p = byAddr[pool.Pick(balance.Request{Key: keys[prefix], HasKey: true}, time.Now())]
		}
		arrived := time.Now()
		p.ep.Acquire()
		pending.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.ep.Release()
			if !p.serve(ctx, prefix) {
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
	var hits, served int64
	for _, p := range pods {
		hits += p.hits.Load()
		served += p.served.Load()
		res.PerPod = append(res.PerPod, int(p.served.Load()))
	}
	if served > 0 {
		res.HitRatio = float64(hits) / float64(served)
	}
	// Requests still queued give up; those being served finish their sleep. Runs never overlap.
	cancel()
	<-done
	return res
}
