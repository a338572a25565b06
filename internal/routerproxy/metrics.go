/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Label values when there is no backend or the model is not one a rule names.
const (
	noBackend  = "none"
	otherModel = "other"
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
			Name: "llmkube_router_requests_total", Help: "Requests answered, by backend, model (the matching rule entry, or other) and HTTP status code.",
		}, []string{"backend", "model", "code"}),
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
	}
	reg.MustRegister(m.requests, m.duration, m.ttfb, m.upstreamErrors, m.fallbacks, m.inFlight)
	return m
}
