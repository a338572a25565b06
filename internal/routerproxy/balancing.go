/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/endpoints"
	"github.com/llmkube/operator/internal/routingdoc"
)

// Balancer chooses the pod of each InferenceService backend that names its Service in the
// routing document. A backend without pods (no permission to read EndpointSlices, none ready,
// not synced yet) sends to its Service URL, as it did before balancing.
type Balancer struct {
	policy string
	pools  map[string]*balance.Pool
	// MaxPodTries bounds the pods one request tries on one backend before its rule's next backend.
	maxPodTries int
	log         *slog.Logger

	mu      sync.Mutex
	reasons map[string]string // the last fallback reason reported, by backend

	pods      *prometheus.GaugeVec
	fallback  *prometheus.GaugeVec
	ejections *prometheus.CounterVec
	retries   *prometheus.CounterVec
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
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// NewBalancer prepares the pools of doc's backends with a Service.
func NewBalancer(doc *routingdoc.Document, o BalancerOptions) *Balancer {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxPodTries < 1 {
		o.MaxPodTries = 3
	}
	b := &Balancer{
		policy: doc.Balancing, pools: map[string]*balance.Pool{}, maxPodTries: o.MaxPodTries, log: o.Log,
		reasons: map[string]string{},
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
	}
	if o.Registerer != nil {
		o.Registerer.MustRegister(b.pods, b.fallback, b.ejections, b.retries, ejectedCollector{b})
	}
	for _, be := range doc.Backends {
		if be.Kind != routingdoc.KindInferenceService || be.Service == nil {
			continue
		}
		b.pools[be.Name] = &balance.Pool{Threshold: o.FailureThreshold, Cooldown: o.Cooldown, LoadFactor: o.LoadFactor}
	}
	return b
}

// Targets are the Services the endpoints watcher feeds into the pools.
func (b *Balancer) Targets(doc *routingdoc.Document) []endpoints.Target {
	var out []endpoints.Target
	for _, be := range doc.Backends {
		if p := b.pools[be.Name]; p != nil {
			out = append(out, endpoints.Target{Backend: be.Name, Namespace: be.Service.Namespace, Service: be.Service.Name, Port: be.Service.Port, Pool: p})
		}
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

// tryBackend sends the request to one of b's pods, and to another pod when that one fails before
// anything reached the client, up to maxPodTries pods; without pods, to b's Service URL. It
// returns false when the rule's next backend should be tried.
func (p *Proxy) tryBackend(w http.ResponseWriter, r *http.Request, x *exchange, b *backend, body []byte, rb requestBody, last bool) bool {
	var pool *balance.Pool
	if p.balancer != nil {
		pool = p.balancer.pools[b.name]
	}
	if pool == nil || pool.Len() == 0 {
		return p.attempt(w, r, x, b, nil, body, rb, last)
	}
	req := balance.Request{AllowEjected: last}
	if p.balancer.policy == routingdoc.BalancingPrefixAffinity {
		req.Key, req.HasKey = affinityKey(r, body, rb)
	}
	for try := range p.balancer.maxPodTries {
		now := time.Now()
		pod := pool.Pick(req, now)
		if pod == nil {
			break
		}
		req.Tried = append(req.Tried, pod)
		lastTry := last && (try == p.balancer.maxPodTries-1 || pool.Remaining(req, now) == 0)
		if p.attempt(w, r, x, b, pod, body, rb, lastTry) {
			switch {
			case x.status == 499:
			case x.status >= 500:
				b.health.failed(time.Now(), p.o.FailureThreshold, p.o.Cooldown)
			default:
				b.health.succeeded()
			}
			return true
		}
		p.balancer.retries.WithLabelValues(b.name).Inc()
	}
	if last {
		// The pods ran out between two picks (the watch removed them): the request's last
		// option is then the Service, which always gets an answer written.
		return p.attempt(w, r, x, b, nil, body, rb, true)
	}
	b.health.failed(time.Now(), p.o.FailureThreshold, p.o.Cooldown)
	return false
}

// podFailed records a failed attempt on pod, and counts an ejection.
func (p *Proxy) podFailed(b *backend, pod *balance.Endpoint, now time.Time) {
	pool := p.balancer.pools[b.name]
	if pool.Failed(pod, now) {
		p.balancer.ejections.WithLabelValues(b.name).Inc()
		p.log.Warn("pod ejected after failing in a row", "backend", b.name, "pod", pod.Addr, "cooldown", p.o.Cooldown.String())
	}
}

// failed and succeeded feed an attempt's outcome to the pod's health when it went to a pod, else
// to the backend's.
func (p *Proxy) failed(b *backend, pod *balance.Endpoint, now time.Time) {
	if pod != nil {
		p.podFailed(b, pod, now)
		return
	}
	b.health.failed(now, p.o.FailureThreshold, p.o.Cooldown)
}

func (p *Proxy) succeeded(b *backend, pod *balance.Endpoint) {
	if pod != nil {
		p.balancer.pools[b.name].Succeeded(pod)
		return
	}
	b.health.succeeded()
}
