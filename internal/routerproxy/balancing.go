/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/endpoints"
	"github.com/llmkube/operator/internal/routerproxy/prefix"
)

// Balancer chooses the pod of each InferenceService backend that names its Service in the
// routing document. A backend without pods (no permission to read EndpointSlices, none ready,
// not synced yet) sends to its Service URL, as it did before balancing.
type Balancer struct {
	o     BalancerOptions
	state atomic.Pointer[balancerState]
	log   *slog.Logger

	mu      sync.Mutex
	reasons map[string]string // the last fallback reason reported, by backend

	pods      *prometheus.GaugeVec
	fallback  *prometheus.GaugeVec
	ejections *prometheus.CounterVec
	retries   *prometheus.CounterVec
	// prefixBlocks counts the prompt blocks of PrefixAffinity's picks, by whether the chosen pod
	// had been sent them (hit) or not (miss).
	prefixBlocks *prometheus.CounterVec

	hasher *prefix.Hasher
}

// balancerState is what one routing document says: swapped whole on a reload.
type balancerState struct {
	policy   string
	pools    map[string]*balance.Pool
	services map[string]routingv1.Service
	// engine, scoring and metrics are EngineAware's (engine_targets.go); nil otherwise.
	engine  *routingv1.EngineScoring
	scoring *balance.EngineScoring
	metrics map[string]*routingv1.EngineMetrics
}

// BalancerOptions configure a Balancer.
type BalancerOptions struct {
	// FailureThreshold failures in a row eject a pod for Cooldown.
	FailureThreshold int
	Cooldown         time.Duration
	// MaxPodTries is how many pods one request may try on a backend; 3 when zero.
	MaxPodTries int
	// LoadFactor is PrefixAffinity's bound: c of consistent hashing with bounded loads.
	LoadFactor float64
	// PrefixBlockBytes, PrefixMaxBlocks and PrefixBlocksPerPod size PrefixAffinity's prefix
	// scoring: the block size in bytes of prompt text, the most blocks hashed per request, and the
	// block hashes remembered per pod. Zero takes the defaults (prefix.DefaultBlockBytes,
	// prefix.DefaultMaxBlocks, balance.DefaultBlocksPerPod).
	PrefixBlockBytes   int
	PrefixMaxBlocks    int
	PrefixBlocksPerPod int
	Log                *slog.Logger
	Registerer         prometheus.Registerer
}

// NewBalancer prepares the pools of doc's backends with a Service.
func NewBalancer(doc *routingv1.Document, o BalancerOptions) *Balancer {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxPodTries < 1 {
		o.MaxPodTries = 3
	}
	b := &Balancer{
		o: o, log: o.Log, reasons: map[string]string{},
		pods: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llmkube_router_backend_pods", Help: "Ready pods of an InferenceService backend the proxy balances over, from its EndpointSlices.",
		}, []string{"backend"}),
		fallback: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llmkube_router_backend_service_fallback", Help: "1 while an InferenceService backend sends to its Service URL instead of choosing a pod (no permission to read EndpointSlices, no ready endpoint, or not synced yet), by backend and reason.",
		}, []string{"backend", "reason"}),
		ejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_pod_ejections_total", Help: "Pods ejected for a cooldown after failing several times in a row, by backend.",
		}, []string{"backend"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_pod_retries_total", Help: "Attempts that failed on one pod and were tried again on another pod of the same backend, by backend.",
		}, []string{"backend"}),
		prefixBlocks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_prefix_blocks_total", Help: "PrefixAffinity: prompt blocks of the requests sent to an InferenceService pod, by backend and result: hit when the proxy had sent that pod the same prefix before (it is likely in the pod's prefix cache), miss otherwise. hit / (hit + miss) is the prefix hit ratio.",
		}, []string{"backend", "result"}),
		hasher: prefixHasher(o),
	}
	if o.Registerer != nil {
		o.Registerer.MustRegister(b.pods, b.fallback, b.ejections, b.retries, b.prefixBlocks, ejectedCollector{b})
	}
	b.reload(doc)
	return b
}

// reload takes doc's backends with a Service: a backend whose Service did not change keeps its
// pool (its pods' counters and ejections).
func (b *Balancer) reload(doc *routingv1.Document) {
	old := b.state.Load()
	s := &balancerState{policy: doc.Balancing, pools: map[string]*balance.Pool{}, services: map[string]routingv1.Service{}}
	s.engine, s.scoring, s.metrics = engineState(doc)
	for _, be := range doc.Backends {
		if be.Kind != routingv1.KindInferenceService || be.Service == nil {
			continue
		}
		s.services[be.Name] = *be.Service
		if old != nil && old.pools[be.Name] != nil && old.services[be.Name] == *be.Service {
			s.pools[be.Name] = old.pools[be.Name]
			continue
		}
		s.pools[be.Name] = &balance.Pool{Threshold: b.o.FailureThreshold, Cooldown: b.o.Cooldown, LoadFactor: b.o.LoadFactor, BlocksPerPod: b.o.PrefixBlocksPerPod}
	}
	if s.policy == routingv1.BalancingPrefixAffinity || s.policy == routingv1.BalancingEngineAware {
		// Both results exist at 0 from the start, so a dashboard's hit ratio and an alert on it
		// have a series before the first request instead of "no data".
		for name := range s.pools {
			b.prefixBlocks.WithLabelValues(name, "hit")
			b.prefixBlocks.WithLabelValues(name, "miss")
		}
	}
	b.state.Store(s)
}

// Targets are the Services the endpoints watcher feeds into the pools.
func (b *Balancer) Targets() []endpoints.Target {
	s := b.state.Load()
	var out []endpoints.Target
	for name, p := range s.pools {
		svc := s.services[name]
		out = append(out, endpoints.Target{Backend: name, Namespace: svc.Namespace, Service: svc.Name, Port: svc.Port, Pool: p})
	}
	return out
}

// Report records a backend's pod count and fallback reason (empty when it balances), and logs a
// change of reason once.
func (b *Balancer) Report(backend string, pods int, reason string) {
	b.pods.WithLabelValues(backend).Set(float64(pods))
	b.mu.Lock()
	defer b.mu.Unlock()
	prev, seen := b.reasons[backend]
	if seen && prev == reason {
		return
	}
	b.reasons[backend] = reason
	if prev != "" {
		b.fallback.DeleteLabelValues(backend, prev)
	}
	if reason == "" {
		b.log.Info("backend balances over its pods", "backend", backend, "pods", pods)
		return
	}
	b.fallback.WithLabelValues(backend, reason).Set(1)
	if reason != endpoints.ReasonNotSynced {
		b.log.Warn("backend sends to its Service URL: the proxy cannot choose a pod", "backend", backend, "reason", reason)
	}
}

// podFailed records a failed attempt on pod; it reports whether this one ejected it.
func (b *Balancer) podFailed(backend string, pod *balance.Endpoint, now time.Time) bool {
	if !pod.Health().Failed(now, b.o.FailureThreshold, b.o.Cooldown) {
		return false
	}
	b.ejections.WithLabelValues(backend).Inc()
	return true
}

// tryBackend sends the request to one of b's pods, and to another pod when judge allows it, up to
// MaxPodTries pods; without pods, to b's Service URL. It returns false when the rule's next
// backend should be tried.
func (p *Proxy) tryBackend(w http.ResponseWriter, x *exchange, req *upstreamRequest, b *backend, last bool) bool {
	var pool *balance.Pool
	var policy string
	var scoring *balance.EngineScoring
	if p.balancer != nil {
		s := p.balancer.state.Load()
		pool, policy, scoring = s.pools[b.name], s.policy, s.scoring
	}
	if pool == nil || pool.Len() == 0 {
		return p.settle(w, x, req, b, nil, p.attempt(x, req, b, nil, 0), last, false) == done
	}
	var pr balance.Request
	if policy == routingv1.BalancingPrefixAffinity || policy == routingv1.BalancingEngineAware {
		pr = p.balancer.affinity(req.r, req.body, req.rb)
		pr.Engine = scoring
	}
	pr.AllowEjected = last
	maxTries := p.balancer.o.MaxPodTries
	for try := range maxTries {
		now := time.Now()
		pod, matched := pool.Choose(pr, now)
		if pod == nil {
			break
		}
		if len(pr.Blocks) > 0 {
			// The pod is told the prompt's blocks when it is chosen, as the scorer it stands in
			// for does: a request that fails on it moves on, and the pod's LRU soon forgets.
			pool.Remember(pod, pr.Blocks)
			if try == 0 {
				p.balancer.prefixBlocks.WithLabelValues(b.name, "hit").Add(float64(matched))
				p.balancer.prefixBlocks.WithLabelValues(b.name, "miss").Add(float64(len(pr.Blocks) - matched))
			}
		}
		pr.Tried = append(pr.Tried, pod)
		morePods := try < maxTries-1 && pool.Remaining(pr, now) > 0
		switch p.settle(w, x, req, b, pod, p.attempt(x, req, b, pod, len(pr.Blocks)-matched), last, morePods) {
		case done:
			return true
		case nextBackend:
			return false
		}
		p.balancer.retries.WithLabelValues(b.name).Inc()
	}
	if last {
		// The pods ran out between two picks (the watch removed them): the request's last
		// option is then the Service, which always gets an answer written.
		return p.settle(w, x, req, b, nil, p.attempt(x, req, b, nil, 0), true, false) == done
	}
	return false
}
