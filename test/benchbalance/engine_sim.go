/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/engine"
)

// EnginePolicies are compared on the engine simulation, in report order.
var EnginePolicies = []Policy{RoundRobin, LeastRequest, PrefixScorer, EngineAware}

// EngineAware is spec.proxy.balancing EngineAware: the pods' reported queue and KV-cache use,
// this replica's in-flight counts and the prefix match (balance, engine.go).
const EngineAware Policy = "engine-aware scorer"

// vllmMetrics are the names the simulated pods export, as controllers/runtimes names vLLM's.
var vllmMetrics = routingv1.EngineMetrics{Path: "/metrics", Waiting: "vllm:num_requests_waiting", Running: "vllm:num_requests_running", KVCache: "vllm:kv_cache_usage_perc"}

// SimOptions are the engine simulation's: pods, their engines, the routers and how often they
// read the pods' metrics. Time is virtual: a run costs the CPU of its decisions, not its duration,
// and the machine's load does not enter the figures.
type SimOptions struct {
	Pods, Slots int
	// KVBlocks is a pod's KV cache, in blocks of prefix.DefaultBlockBytes bytes of prompt.
	KVBlocks int
	// Prefill per block not cached; Decode per request after its first token, which needs
	// OutputBlocks more blocks of KV cache for its answer.
	Prefill, Decode time.Duration
	OutputBlocks    int
	// Interval of each router replica's reads of each pod's metrics.
	Interval time.Duration
	// Scoring is EngineAware's (the operator's defaults, or a variant under test).
	Scoring    balance.EngineScoring
	LoadFactor float64
	// Rounds: each policy runs once per seed 1..Rounds (other arrivals, same for every policy).
	Rounds int
	// Policies are those compared, in report order; EnginePolicies when empty.
	Policies []Policy
}

// SimScenario is one workload on the pods through Replicas router replicas.
type SimScenario struct {
	Name     string
	Workload func(seed uint64) []request
	Replicas int
	// BySession sends each session (user, document) to one replica, as a Service with
	// sessionAffinity or a gateway hashing a header would; otherwise a request reaches a replica
	// at random (a Service balancing connections).
	BySession bool
}

// SimResult is one policy on one scenario: the round with the median p99, and the p99 of every
// round (the run's spread).
type SimResult struct {
	Policy      Policy
	Requests    int
	Throughput  float64
	P50, P99    time.Duration
	HitRatio    float64
	Preemptions int
	PerPod      []int
	P99s        []time.Duration
	// Tail is where the requests at and above the p99 spent their time to first token.
	Tail Tail
}

// job is one request in the simulation.
type job struct {
	req       *request
	arrived   time.Duration
	ep        *balance.Endpoint
	pod       *enginePod
	gen       int // bumped at each admission and preemption: older events are void
	scheduled int
	prefill   time.Duration
	// prefillCount is the prompt work the router counts against the pod until the first token.
	prefillCount *balance.Prefill
	admitted     time.Duration // when the admission that led to its first token happened
	pinned       []uint64
	preempted    bool
	firstToken   time.Duration
	done         bool
}

type event struct {
	at      time.Duration
	kind    int // arrival, first token, finish, read
	j       *job
	gen     int
	replica int
	seq     int
}

const (
	evArrival = iota
	evFirstToken
	evFinish
	evRead
)

type events []*event

func (e events) Len() int { return len(e) }
func (e events) Less(a, b int) bool {
	if e[a].at != e[b].at {
		return e[a].at < e[b].at
	}
	return e[a].seq < e[b].seq
}
func (e events) Swap(a, b int) { e[a], e[b] = e[b], e[a] }
func (e *events) Push(x any)   { *e = append(*e, x.(*event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// RunSim runs every policy on sc, Rounds times (seeds 1..Rounds).
func RunSim(o SimOptions, sc SimScenario) []SimResult {
	pols := o.Policies
	if len(pols) == 0 {
		pols = EnginePolicies
	}
	out := make([]SimResult, len(pols))
	for i, pol := range pols {
		var rounds []SimResult
		for seed := range uint64(max(o.Rounds, 1)) {
			rounds = append(rounds, simOne(o, sc, pol, sc.Workload(seed+1), seed+1))
		}
		slices.SortFunc(rounds, func(a, b SimResult) int { return int(a.P99 - b.P99) })
		out[i] = rounds[len(rounds)/2]
		for _, r := range rounds {
			out[i].P99s = append(out[i].P99s, r.P99)
		}
	}
	return out
}

func simOne(o SimOptions, sc SimScenario, pol Policy, reqs []request, seed uint64) SimResult {
	rng := rand.New(rand.NewPCG(seed, 99))
	pods := make([]*enginePod, o.Pods)
	addrs := make([]string, o.Pods)
	for i := range pods {
		pods[i] = newEnginePod(o.Slots, o.KVBlocks, o.OutputBlocks, o.Prefill, o.Decode)
		addrs[i] = fmt.Sprintf("192.0.2.%d:8000", i+1)
	}
	replicas := max(sc.Replicas, 1)
	type router struct {
		pool *balance.Pool
		byEp map[*balance.Endpoint]*enginePod
		rr   int
	}
	routers := make([]*router, replicas)
	for r := range routers {
		// Each replica's random choices (least request's two pods, ties) from its own stream of
		// the seed: a seed gives one result.
		pool := &balance.Pool{Threshold: 1 << 30, LoadFactor: o.LoadFactor, IntN: rand.New(rand.NewPCG(seed, 100+uint64(r))).IntN}
		pool.Update(addrs)
		rt := &router{pool: pool, byEp: map[*balance.Endpoint]*enginePod{}, rr: r}
		for i, ep := range pool.Endpoints() {
			rt.byEp[ep] = pods[i]
		}
		routers[r] = rt
	}
	epOf := func(rt *router, p *enginePod) *balance.Endpoint {
		for ep, q := range rt.byEp {
			if q == p {
				return ep
			}
		}
		return nil
	}

	var q events
	seq := 0
	push := func(e *event) { seq++; e.seq = seq; heap.Push(&q, e) }
	for i := range reqs {
		push(&event{at: reqs[i].at, kind: evArrival, j: &job{req: &reqs[i], arrived: reqs[i].at}})
	}
	if pol == EngineAware {
		for r := range routers {
			push(&event{at: time.Duration(rng.Int64N(int64(o.Interval))), kind: evRead, replica: r})
		}
	}
	base := time.Unix(1_700_000_000, 0)
	schedule := func(p *enginePod, now time.Duration) {
		p.admit()
		for _, j := range p.running {
			if j.scheduled != j.gen {
				j.scheduled = j.gen
				if j.firstToken == 0 {
					j.admitted = now
					push(&event{at: now + j.prefill, kind: evFirstToken, j: j, gen: j.gen})
				}
				push(&event{at: now + j.prefill + o.Decode, kind: evFinish, j: j, gen: j.gen})
			}
		}
	}
	var ttft []time.Duration
	var firsts []*job
	var last time.Duration
	remaining := len(reqs)
	for q.Len() > 0 && (remaining > 0 || pol != EngineAware || q.Len() > replicas) {
		e := heap.Pop(&q).(*event)
		now := e.at
		switch e.kind {
		case evArrival:
			j := e.j
			r := rng.IntN(replicas)
			if sc.BySession {
				r = int(j.req.session % uint64(replicas))
			}
			rt := routers[r]
			var ep *balance.Endpoint
			switch pol {
			case RoundRobin:
				ep = rt.pool.Endpoints()[rt.rr%o.Pods]
				rt.rr++
			case LeastRequest:
				ep = rt.pool.Pick(balance.Request{}, base.Add(now))
			case PrefixScorer:
				ep = rt.pool.Pick(balance.Request{Blocks: j.req.blocks}, base.Add(now))
				rt.pool.Remember(ep, j.req.blocks)
			case EngineAware:
				s := o.Scoring
				var matched int
				ep, matched = rt.pool.Choose(balance.Request{Blocks: j.req.blocks, Engine: &s}, base.Add(now))
				rt.pool.Remember(ep, j.req.blocks)
				j.prefillCount = ep.StartPrefill(len(j.req.blocks) - matched)
			}
			ep.Acquire()
			j.ep, j.pod = ep, rt.byEp[ep]
			j.pod.queue = append(j.pod.queue, j)
			schedule(j.pod, now)
		case evFirstToken:
			if e.gen == e.j.gen && e.j.firstToken == 0 {
				e.j.firstToken = now
				e.j.prefillCount.Done()
				ttft = append(ttft, now-e.j.arrived)
				firsts = append(firsts, e.j)
				e.j.pod.grow(e.j)
				schedule(e.j.pod, now)
			}
		case evFinish:
			if e.gen != e.j.gen || e.j.done {
				continue
			}
			e.j.done = true
			e.j.pod.finish(e.j)
			e.j.ep.Release()
			remaining--
			last = now
			schedule(e.j.pod, now)
		case evRead:
			rt := routers[e.replica]
			for _, p := range pods {
				ep := epOf(rt, p)
				l, err := engine.Parse(strings.NewReader(p.metricsPage()), vllmMetrics)
				if err != nil {
					panic(err)
				}
				l.At, l.SentBefore, l.InFlightBefore = base.Add(now), ep.Sent(), ep.Outstanding()
				ep.SetEngineLoad(l)
			}
			if remaining > 0 {
				push(&event{at: now + o.Interval, kind: evRead, replica: e.replica})
			}
		}
	}
	res := SimResult{Policy: pol, Requests: len(ttft)}
	slices.Sort(ttft)
	res.P50, res.P99 = ttft[len(ttft)*50/100], ttft[len(ttft)*99/100]
	res.Throughput = float64(len(reqs)) / last.Seconds()
	var blocks, cached int
	for _, p := range pods {
		blocks += p.blocks
		cached += p.cached
		res.Preemptions += p.preemptions
		res.PerPod = append(res.PerPod, p.served)
	}
	res.HitRatio = float64(cached) / float64(max(blocks, 1))
	res.Tail = tailOf(firsts, res.P99, pods, o.Scoring.LongPrompt)
	return res
}
