/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package monitoring checks what the chart ships for Prometheus and Grafana (the PrometheusRule,
// the dashboards) against the metrics the operator and the router-proxy register.
//
// It is a module of its own: the PromQL parser and the rule-file loader come from
// github.com/prometheus/prometheus, a large module the operator's binaries never need, so it stays
// out of the root go.mod. `make test` runs it.
package monitoring
