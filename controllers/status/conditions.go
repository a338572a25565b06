/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package status is what both reconcilers share about reporting: the Degraded condition and its
// reasons, the Warning Event of a new rejection, the API server's limits on what is reported, the
// deduplication of status writes, and the filter that keeps status-only updates from reconciling.
package status

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/events"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

// Reasons of the Degraded condition, the same for every kind. The reason is the first failure's.
const (
	// ReasonApplied: every object was applied (or already held what the operator wants).
	ReasonApplied = "Applied"
	// ReasonApplyRejected: the API server refused an apply (validation, size, admission).
	ReasonApplyRejected = "ApplyRejected"
	// ReasonForbidden: the API server refused an apply for want of a permission; the message
	// names it.
	ReasonForbidden = "Forbidden"
	// ReasonApplyFailed: an apply did not get an answer that says why (timeout, conflict).
	ReasonApplyFailed = "ApplyFailed"
	// ReasonMigrationFailed: the one-time migration of legacy ownership failed.
	ReasonMigrationFailed = "MigrationFailed"
	// ReasonRolloutGateFailed: the rollout gate could not decide; the template waits, the rest
	// was applied.
	ReasonRolloutGateFailed = "RolloutGateFailed"
	// ReasonReconcileFailed: any other local failure (reading, extracting, building).
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonNotControlled: an object of the name the operator writes exists and its owner does
	// not control it (a user's, another controller's, a second owner's); it is left untouched.
	ReasonNotControlled = "NotControlled"
)

// Reason is the Degraded reason for err (see the constants).
func Reason(err error) string {
	var f *ownership.Failure
	if !errors.As(err, &f) {
		return ReasonReconcileFailed
	}
	switch f.Step {
	case ownership.StepHeld:
		// The reason of the object it needs: a hold on a refusal is a refusal.
		if cause := errors.Unwrap(f.Err); cause != nil {
			return Reason(cause)
		}
	case ownership.StepApply:
		switch {
		case apierrors.IsForbidden(f.Err):
			return ReasonForbidden
		case ownership.Refused(f.Err):
			return ReasonApplyRejected
		}
		return ReasonApplyFailed
	case ownership.StepMigrate:
		return ReasonMigrationFailed
	case ownership.StepGate:
		return ReasonRolloutGateFailed
	case ownership.StepOwnership:
		return ReasonNotControlled
	}
	return ReasonReconcileFailed
}

// SetDegraded sets the Degraded condition in conds from this reconcile's failures (errs, in the
// order they happened), quoting them within the length a condition message may have.
func SetDegraded(conds *[]metav1.Condition, generation int64, errs []error) {
	c := metav1.Condition{Type: inferencev1alpha1.ConditionDegraded, Status: metav1.ConditionFalse, Reason: ReasonApplied,
		Message: "every object was applied", ObservedGeneration: generation}
	if err := errors.Join(errs...); err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, Reason(errs[0]), Truncate(err.Error(), ConditionMessageLimit)
	}
	meta.SetStatusCondition(conds, c)
}

// ReportFailure records a Warning Event on owner for this reconcile's failures, once per new
// failure (see NewRejection); conds and generation are owner's status before this reconcile. The
// Event's reason is ApplyFailed for a failed apply, and the condition's reason for a local
// failure (MigrationFailed, RolloutGateFailed, ReconcileFailed).
//
// Every failure, new or not, is counted in FailuresTotal.
func ReportFailure(recorder events.EventRecorder, owner runtime.Object, conds []metav1.Condition, generation int64, errs []error) {
	countFailures(owner, errs)
	err := errors.Join(errs...)
	if err == nil || !NewRejection(conds, inferencev1alpha1.ConditionDegraded, generation, err.Error()) {
		return
	}
	reason := Reason(errs[0])
	switch reason {
	case ReasonApplyRejected, ReasonForbidden, ReasonApplyFailed:
		reason = "ApplyFailed"
	}
	recorder.Eventf(owner, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", err.Error())
}

// ConditionsToApply turns the conditions whose type a reconciler owns into apply configurations,
// in order; the others are left to their owners.
func ConditionsToApply(conds []metav1.Condition, owned func(string) bool) []*metav1ac.ConditionApplyConfiguration {
	var out []*metav1ac.ConditionApplyConfiguration
	for _, c := range conds {
		if !owned(c.Type) {
			continue
		}
		out = append(out, metav1ac.Condition().
			WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).WithMessage(c.Message).
			WithObservedGeneration(c.ObservedGeneration).WithLastTransitionTime(c.LastTransitionTime))
	}
	return out
}
