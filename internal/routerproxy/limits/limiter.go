/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Limiter enforces the limits of one routing document's clients in its store.
type Limiter struct {
	store      store
	prefix     string
	shared     bool
	failClosed bool
	metrics    *Metrics
	log        *slog.Logger
	// cfg is the store configuration this limiter was made for (Same compares it).
	cfg routingv1.LimitsStore
	// quietUntil (Unix ns): after a store failure, the store is not asked again until then, so
	// that a Redis that is down costs requests no timeout each; then one request probes it.
	quietUntil atomic.Int64
	failingMu  sync.Mutex
	failing    bool
}

// retryStoreAfter is how long a failed store is left alone before it is asked again.
const retryStoreAfter = time.Second

// New is the limiter of a document's limits store: Redis when it names one (passwordFile holds
// its password), else this replica's memory.
func New(s *routingv1.LimitsStore, passwordFile string, m *Metrics, log *slog.Logger) *Limiter {
	l := &Limiter{prefix: s.KeyPrefix, failClosed: s.FailClosed, metrics: m, log: log, cfg: *s}
	if s.Redis != nil {
		r := *s.Redis
		l.cfg.Redis = &r
		rs := newRedisStore(s.Redis, passwordFile)
		rs.failed = func(err error) { l.settleFailed(err) }
		rs.settled = func(n int) { m.settled.Add(float64(n)) }
		l.store, l.shared = rs, true
	} else {
		l.store = newMemory()
	}
	m.shared.Set(map[bool]float64{true: 1, false: 0}[l.shared])
	return l
}

// Same says l was made for store s, so a reload can keep it (and its counters and connections).
func (l *Limiter) Same(s *routingv1.LimitsStore) bool {
	if s == nil || (s.Redis == nil) != (l.cfg.Redis == nil) {
		return false
	}
	if s.Redis != nil && *s.Redis != *l.cfg.Redis {
		return false
	}
	return s.KeyPrefix == l.cfg.KeyPrefix && s.FailClosed == l.cfg.FailClosed
}

// Close lets go of the store's connections.
func (l *Limiter) Close() error { return l.store.close() }

// Admit decides a request of client c reserving reserve tokens. The ticket, when not nil, must
// be settled once the request ended.
//
// Note: a store that fails or does not answer within its timeout gives the router's failure
// mode: fail-open admits the request with no limit headers (a metric and a log line say so),
// fail-closed refuses it (Verdict.Unavailable). Either way the request waited at most one
// timeout, and the next second's requests wait none.
func (l *Limiter) Admit(c *routingv1.Client, reserve int64) (Verdict, *Ticket) {
	if c == nil || c.Limits == nil {
		return Verdict{Allowed: true}, nil
	}
	now := time.Now()
	t := newTicket(l.prefix, c, max(reserve, 1), now)
	var v Verdict
	err := errQuiet
	if now.UnixNano() >= l.quietUntil.Load() {
		v, err = l.store.admit(t, now)
	}
	if err != nil {
		return l.storeFailed(c, err), nil
	}
	l.recovered()
	if !v.Allowed {
		l.metrics.refusals.WithLabelValues(v.Refused).Inc()
		return capRetry(v), nil
	}
	return v, t
}

// Settle charges the tokens the request used (what the backend reported, or the estimate when
// it reported none) and releases its concurrency slot.
//
// Note: a settlement that would change nothing (no concurrency slot to release, and no token
// limit or the charge equal to the reservation) is not sent: a client with only a request rate
// costs Redis one call per request, not two. A settlement is queued even while the store fails:
// one whose round trip fails is sent again until Redis confirms it or its lease ended.
func (l *Limiter) Settle(t *Ticket, used int64) {
	if t == nil {
		return
	}
	if !t.settles(used) {
		l.store.forget(t)
		return
	}
	if err := l.store.settle(t, used); err != nil {
		l.settleFailed(err)
	}
}

// capRetry caps the Retry-After of a rate's refusal at the rate's window, a minute, as OpenAI
// does: a client in debt for longer (a request that used far more than it reserved) is told to
// come back within the window, and is refused again then if it still is.
//
// Note: OpenAI's SDKs ignore a Retry-After above 60 s and back off on their own; a quota's
// refusal keeps its true wait (until the period's end), which no retry shortens.
func capRetry(v Verdict) Verdict {
	if v.Refused == LimitRequestsPerMinute || v.Refused == LimitTokensPerMinute {
		v.RetryAfter = min(v.RetryAfter, time.Duration(minute)*time.Millisecond)
	}
	return v
}

func (l *Limiter) settleFailed(err error) {
	l.metrics.storeErrors.WithLabelValues("settle").Inc()
	l.log.Warn("limits store: settling requests failed; they are sent again until their lease ends", "error", err.Error())
}

type quietError struct{}

func (quietError) Error() string { return "the limits store failed less than a second ago" }

var errQuiet error = quietError{}

func (l *Limiter) storeFailed(c *routingv1.Client, err error) Verdict {
	if err != errQuiet {
		l.quietUntil.Store(time.Now().Add(retryStoreAfter).UnixNano())
	}
	mode := "fail_open"
	if l.failClosed {
		mode = "fail_closed"
	}
	l.metrics.storeErrors.WithLabelValues(mode).Inc()
	l.metrics.storeUp.Set(0)
	l.failingMu.Lock()
	if !l.failing {
		l.failing = true
		l.log.Error("limits store does not answer: requests are "+map[bool]string{true: "refused with 503 (fail-closed)", false: "let through unlimited (fail-open)"}[l.failClosed]+" until it does",
			"client", c.Name, "error", err.Error())
	}
	l.failingMu.Unlock()
	if l.failClosed {
		return Verdict{Unavailable: true, RetryAfter: retryStoreAfter}
	}
	return Verdict{Allowed: true}
}

func (l *Limiter) recovered() {
	l.metrics.storeUp.Set(1)
	l.failingMu.Lock()
	defer l.failingMu.Unlock()
	if l.failing {
		l.failing = false
		l.log.Info("limits store answers again: limits are enforced")
	}
}

// Metrics are the limiter's metrics; one set per proxy, whatever its limiters.
type Metrics struct {
	refusals    *prometheus.CounterVec
	storeErrors *prometheus.CounterVec
	storeUp     prometheus.Gauge
	shared      prometheus.Gauge
	settled     prometheus.Counter
}

// NewMetrics registers the limits metrics, every series at 0 from the start. Label values are
// this package's constants; the refusals of one client are its requests_total{code="429"}.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_limits_refusals_total", Help: "Requests refused with 429 by a client limit, by limit (requests_per_minute, tokens_per_minute, tokens_per_day, tokens_per_month, concurrent_requests); by client: llmkube_router_requests_total{code=\"429\"}.",
		}, []string{"limit"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_limits_store_errors_total", Help: "Calls to the limits store (Redis) that failed or passed their timeout, by what the request got: fail_open (let through unlimited), fail_closed (503), or settle (a charge after the answer was lost).",
		}, []string{"result"}),
		storeUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llmkube_router_limits_store_up", Help: "1 when the last call to the limits store succeeded, 0 when it failed.",
		}),
		shared: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llmkube_router_limits_shared", Help: "1 when client limits are counted in Redis, shared by every replica; 0 when this replica counts them alone.",
		}),
	}
	m.settled = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "llmkube_router_limits_settled_total", Help: "Requests whose metered tokens were charged to their client's limits in Redis (sent in pipelined batches after the answer).",
	})
	m.storeUp.Set(1)
	reg.MustRegister(m.refusals, m.storeErrors, m.storeUp, m.shared, m.settled)
	for _, r := range []string{"fail_open", "fail_closed", "settle"} {
		m.storeErrors.WithLabelValues(r)
	}
	for _, l := range allLimits {
		m.refusals.WithLabelValues(l)
	}
	return m
}
