/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/rollout"
	"github.com/llmkube/operator/controllers/statemetrics"
	"github.com/llmkube/operator/controllers/status"
)

// RegisterMetrics registers the operator's own metrics (prefix llmkube_, listed in docs/operations.md's
// metrics table) with reg: the counters of the packages that count events, and the gauges that
// statemetrics computes from reader (the manager's cache) at each scrape.
//
// Note: a metric already registered is no error, so a process that sets up more than one manager
// (the integration suite) registers once; the first manager's cache then answers.
func RegisterMetrics(reg prometheus.Registerer, reader client.Reader) error {
	cs := append(append(append(ownership.Collectors(), status.Collectors()...), rollout.Collectors()...),
		&statemetrics.Collector{Reader: reader})
	for _, c := range cs {
		if err := reg.Register(c); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
			return err
		}
	}
	return nil
}
