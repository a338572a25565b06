/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// FailuresTotal counts the failures of reconciles, by the owner's kind and the Degraded reason
// each failure would carry (see Reason), whether or not it is a new one.
var FailuresTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "llmkube_apply_failures_total",
	Help: "Failures of a reconcile (one per object that could not be applied or computed), by owner kind (InferenceService, ModelRouter) and the Degraded reason it carries: ApplyRejected, Forbidden, ApplyFailed, MigrationFailed, RolloutGateFailed, ReconcileFailed.",
}, []string{"kind", "reason"})

// Collectors are the metrics of this package, for the operator's registry.
func Collectors() []prometheus.Collector { return []prometheus.Collector{FailuresTotal} }

var failureReasons = []string{ReasonApplyRejected, ReasonForbidden, ReasonApplyFailed, ReasonMigrationFailed,
	ReasonRolloutGateFailed, ReasonReconcileFailed}

func init() {
	// Every kind and reason from the start: a rate() or an alert sees 0, not nothing.
	for _, kind := range []string{"InferenceService", "ModelRouter"} {
		for _, r := range failureReasons {
			FailuresTotal.WithLabelValues(kind, r)
		}
	}
}

// countFailures adds errs to FailuresTotal under owner's kind.
func countFailures(owner runtime.Object, errs []error) {
	kind := ""
	switch owner.(type) {
	case *inferencev1alpha1.InferenceService:
		kind = "InferenceService"
	case *inferencev1alpha1.ModelRouter:
		kind = "ModelRouter"
	default:
		kind = owner.GetObjectKind().GroupVersionKind().Kind
	}
	for _, err := range errs {
		if err != nil {
			FailuresTotal.WithLabelValues(kind, Reason(err)).Inc()
		}
	}
}
