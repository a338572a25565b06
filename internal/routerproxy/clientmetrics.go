/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import "github.com/prometheus/client_golang/prometheus"

// Phases of a client timeout.
const (
	// phaseBody: the body did not arrive within --body-read-timeout (408).
	phaseBody = "body"
	// phaseResponse: the client read nothing of the answer for the write idle limit.
	phaseResponse = "response"
)

// clientMetrics say what clients cost: the body bytes held against the budget, the requests the
// budget refused, and the clients that stalled.
type clientMetrics struct {
	refused  prometheus.Counter
	timeouts *prometheus.CounterVec
}

func newClientMetrics(reg prometheus.Registerer, budget *bodyBudget) *clientMetrics {
	m := &clientMetrics{
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "llmkube_router_body_budget_refusals_total", Help: "Requests refused with 503 before their body was read because the bodies in flight filled the body memory budget.",
		}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_client_timeouts_total", Help: "Requests ended because the client stalled, by phase: body (its body did not arrive within --body-read-timeout) or response (it read nothing of the answer for the idle limit).",
		}, []string{"phase"}),
	}
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "llmkube_router_body_bytes_in_flight", Help: "Bytes of request bodies admitted and not yet let go of, against the body memory budget.",
	}, func() float64 { return float64(budget.held.Load()) })
	size := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "llmkube_router_body_budget_bytes", Help: "The body memory budget: bytes of request bodies the proxy holds at most at once.",
	}, func() float64 { return float64(budget.size) })
	reg.MustRegister(m.refused, m.timeouts, held, size)
	for _, p := range []string{phaseBody, phaseResponse} {
		m.timeouts.WithLabelValues(p)
	}
	return m
}
