/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Label values when there is no backend, the model is not one a rule names, or the key is no
// named client's (client names come from the routing document only, never from a request).
const (
	noBackend  = "none"
	otherModel = "other"
	noClient   = "none"
)

// metrics of the proxy, prefix llmkube_router_. Label values are bounded by the routing document:
// backend is a backend's name or "none", model is the rule entry that matched (an exact name or a
// prefix*) or "other", code an HTTP status (499 when the client went away first).
type metrics struct {
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	ttfb           *prometheus.HistogramVec
	upstreamErrors *prometheus.CounterVec
	fallbacks      *prometheus.CounterVec
	inFlight       *prometheus.GaugeVec
	tokens         *prometheus.CounterVec
	estimated      *prometheus.CounterVec
	ttft           *prometheus.HistogramVec
	tpot           *prometheus.HistogramVec
}

// Upstream error reasons.
const (
	reasonConnect = "connect"
	reasonTimeout = "timeout"
	reason429     = "status_429"
	reason5xx     = "status_5xx"
	reasonStream  = "stream_broken"
)

func newMetrics(reg prometheus.Registerer) *metrics {
	buckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_requests_total", Help: "Requests answered, by backend, model (the matching rule entry, or other), HTTP status code and client (a name of spec.clients, or none).",
		}, []string{"backend", "model", "code", "client"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "llmkube_router_request_duration_seconds", Help: "Time from a request's arrival to the end of its response, by backend.", Buckets: buckets,
		}, []string{"backend"}),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "llmkube_router_time_to_first_byte_seconds", Help: "Time from a request's arrival to the first byte of the response body sent to the client, by backend.", Buckets: buckets,
		}, []string{"backend"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_upstream_errors_total", Help: "Failed attempts at a backend, by backend and reason (connect, timeout, status_429, status_5xx, stream_broken).",
		}, []string{"backend", "reason"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_fallbacks_total", Help: "Requests passed on to the next backend of their rule, by the backend that failed or was cooling down.",
		}, []string{"backend"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llmkube_router_in_flight_requests", Help: "Requests being sent to or streamed from a backend.",
		}, []string{"backend"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_tokens_total", Help: "Tokens the backends reported in the usage of their answers, by backend, model (the matching rule entry, or other), type (input or output) and client (a name of spec.clients, or none).",
		}, []string{"backend", "model", "type", "client"}),
		estimated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_estimated_output_tokens_total", Help: "Streams whose answer reported no usage: output tokens the proxy counted itself, one per chunk value that carried text, by backend and model. Not included in llmkube_router_tokens_total.",
		}, []string{"backend", "model"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "llmkube_router_time_to_first_token_seconds", Help: "Streams: time from a request's arrival to the first chunk with content sent to the client, by backend.", Buckets: buckets,
		}, []string{"backend"}),
		tpot: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "llmkube_router_time_per_output_token_seconds", Help: "Streams: time from the first token to the end, divided by the output tokens after the first, by backend.",
			Buckets: []float64{.001, .0025, .005, .01, .02, .03, .05, .075, .1, .15, .2, .3, .5, 1, 2.5},
		}, []string{"backend"}),
	}
	reg.MustRegister(m.requests, m.duration, m.ttfb, m.upstreamErrors, m.fallbacks, m.inFlight, m.tokens, m.estimated, m.ttft, m.tpot)
	return m
}

// observeTokens records an answer's usage (or, for a stream that reported none, the proxy's own
// count of its output) and, for a stream, its token latencies. end is when the answer ended.
//
// Note: the estimate has a counter of its own, so that llmkube_router_tokens_total stays what
// the backends reported (what a bill says); time per output token is only from reported usage.
func (m *metrics) observeTokens(x *exchange, end time.Time) {
	switch {
	case x.usage.ok:
		m.tokens.WithLabelValues(x.backend, x.model, "input", x.client).Add(float64(x.usage.input))
		m.tokens.WithLabelValues(x.backend, x.model, "output", x.client).Add(float64(x.usage.output))
	case x.chunks > 0:
		m.estimated.WithLabelValues(x.backend, x.model).Add(float64(x.chunks))
	}
	if x.firstToken.IsZero() {
		return
	}
	m.ttft.WithLabelValues(x.backend).Observe(x.firstToken.Sub(x.start).Seconds())
	if x.usage.output > 1 {
		m.tpot.WithLabelValues(x.backend).Observe(end.Sub(x.firstToken).Seconds() / float64(x.usage.output-1))
	}
}
