/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// Target is one backend's pool of pods and where they report their load.
type Target struct {
	Backend string
	Pool    *balance.Pool
	// Metrics is nil when the runtime exports nothing the operator knows: its pods are all
	// scored blind.
	Metrics *routingv1.EngineMetrics
}

// Scraper reads every pod of its targets on the routing document's interval.
type Scraper struct {
	// Client sends the reads (the proxy's transport, so they dial as requests do).
	Client *http.Client
	// Targets is what to read now: nil scoring when the document is not EngineAware.
	Targets func() (*routingv1.EngineScoring, []Target)

	blind  *prometheus.GaugeVec
	failed *prometheus.CounterVec

	mu      sync.Mutex
	reading map[*balance.Endpoint]bool
}

// NewScraper registers the scraper's metrics with reg (when not nil).
func NewScraper(client *http.Client, targets func() (*routingv1.EngineScoring, []Target), reg prometheus.Registerer) *Scraper {
	s := &Scraper{
		Client: client, Targets: targets, reading: map[*balance.Endpoint]bool{},
		blind: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llmkube_router_engine_pods_blind", Help: "EngineAware: ready pods of a backend scored without a fresh read of their engine's metrics (unreadable, too slow, stale, or a runtime without known metrics): they go by this replica's own in-flight counts.",
		}, []string{"backend"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_engine_reads_failed_total", Help: "EngineAware: reads of a pod's metrics endpoint that failed (connection, status, timeout, a body over the bound, or a page without the metrics), by backend.",
		}, []string{"backend"}),
	}
	if reg != nil {
		reg.MustRegister(s.blind, s.failed)
	}
	return s
}

// Run reads until ctx ends. Each round starts a read of every pod that has none running, and
// counts the pods scored blind.
//
// Note: a read that hangs holds only its own goroutine, until its timeout; the pod is not read
// again meanwhile, so a pod that never answers costs one goroutine, not one per interval.
func (s *Scraper) Run(ctx context.Context) {
	for {
		wait := time.Second
		if cfg, targets := s.Targets(); cfg != nil {
			interval, timeout, stale := cfg.Durations()
			wait = interval
			now := time.Now()
			for _, t := range targets {
				blind := 0
				for _, ep := range t.Pool.Endpoints() {
					if !ep.EngineFresh(now, stale) {
						blind++
					}
					if t.Metrics != nil && s.start(ep) {
						go s.read(ctx, t, ep, timeout, cfg.MaxBodyBytes)
					}
				}
				s.blind.WithLabelValues(t.Backend).Set(float64(blind))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (s *Scraper) start(ep *balance.Endpoint) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reading[ep] {
		return false
	}
	s.reading[ep] = true
	return true
}

func (s *Scraper) read(ctx context.Context, t Target, ep *balance.Endpoint, timeout time.Duration, maxBody int64) {
	defer func() {
		s.mu.Lock()
		delete(s.reading, ep)
		s.mu.Unlock()
	}()
	at, mark, inFlight := time.Now(), ep.Sent(), ep.Outstanding()
	l, err := Read(ctx, s.Client, URL(ep.Addr, *t.Metrics), *t.Metrics, timeout, maxBody)
	if err != nil {
		s.failed.WithLabelValues(t.Backend).Inc()
		return
	}
	l.At, l.SentBefore, l.InFlightBefore = at, mark, inFlight
	ep.SetEngineLoad(l)
}

// URL is the metrics endpoint of the pod at addr (host:port of its serving port).
func URL(addr string, m routingv1.EngineMetrics) string {
	if m.Port != 0 {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			addr = net.JoinHostPort(host, strconv.Itoa(int(m.Port)))
		}
	}
	return "http://" + addr + m.Path
}

// ErrTooLarge is a metrics page longer than the bound.
var ErrTooLarge = errors.New("metrics page over the size bound")

// Read is one read of url within timeout. At most maxBody bytes of the page are read (a longer
// page is ErrTooLarge), and only the lines of m's names are held (Parse).
func Read(ctx context.Context, c *http.Client, url string, m routingv1.EngineMetrics, timeout time.Duration, maxBody int64) (balance.EngineLoad, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return balance.EngineLoad{}, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.Do(req)
	if err != nil {
		return balance.EngineLoad{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return balance.EngineLoad{}, fmt.Errorf("metrics endpoint answered %s", resp.Status)
	}
	body := &io.LimitedReader{R: resp.Body, N: maxBody + 1}
	l, err := Parse(body, m)
	if body.N == 0 {
		return balance.EngineLoad{}, ErrTooLarge
	}
	return l, err
}
