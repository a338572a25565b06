/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var descEjected = prometheus.NewDesc("llmkube_router_backend_pods_ejected",
	"Pods of an InferenceService backend that are cooling down after failing several times in a row, at scrape time, by backend; equal to llmkube_router_backend_pods when every pod is ejected.",
	[]string{"backend"}, nil)

// ejectedCollector counts each pool's ejected pods at scrape time.
//
// Note: an ejection ends by the clock, not by an event, so a gauge kept up to date by the
// request path would go stale until the next request; reading the pools at scrape time cannot.
type ejectedCollector struct{ b *Balancer }

func (c ejectedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descEjected }

func (c ejectedCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	st := c.b.state.Load() // the pools of the routing document in force
	if st == nil {
		return
	}
	for backend, pool := range st.pools {
		n := 0
		for _, e := range pool.Endpoints() {
			if e.Ejected(now) {
				n++
			}
		}
		ch <- prometheus.MustNewConstMetric(descEjected, prometheus.GaugeValue, float64(n), backend)
	}
}
