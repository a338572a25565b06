/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// MigrationsTotal counts migrations of legacy ownership (of any applied kind), by the kind of the
// owning object (InferenceService, ModelRouter) and the result (migrated, failed).
var MigrationsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "llmkube_ownership_migrations_total",
	Help: "Objects (Deployment, Service, ConfigMap, HPA) whose legacy ownership was migrated to the operator's managedFields entry, by owner kind and result.",
}, []string{"kind", "result"})

func init() {
	crmetrics.Registry.MustRegister(MigrationsTotal)
}
