/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package rollout

import "github.com/prometheus/client_golang/prometheus"

// WaitSeconds observes, when a deferred pod-template change is finally let through, how long it
// waited at the gate (since RolloutDeferred became True). The waits still under way are the
// llmkube_inferenceservice_rollout_deferred gauges (package statemetrics).
var WaitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "llmkube_rollout_gate_wait_seconds",
	Help:    "How long a deferred pod-template change waited at the rollout gate (waitForIdle) before it rolled.",
	Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600},
})

// Collectors are the metrics of this package, for the operator's registry.
func Collectors() []prometheus.Collector { return []prometheus.Collector{WaitSeconds} }
