/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/events"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// Reasons of the Degraded condition, the same for every kind.
const (
	ReasonApplyRejected = "ApplyRejected"
	ReasonApplied       = "Applied"
)

// SetDegraded sets the Degraded condition in conds from this reconcile's apply error, quoting the
// API server, within the length a condition message may have.
func SetDegraded(conds *[]metav1.Condition, generation int64, applyErr error) {
	c := metav1.Condition{Type: inferencev1alpha1.ConditionDegraded, Status: metav1.ConditionFalse, Reason: ReasonApplied,
		Message: "every object was applied", ObservedGeneration: generation}
	if applyErr != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonApplyRejected, Truncate(applyErr.Error(), ConditionMessageLimit)
	}
	meta.SetStatusCondition(conds, c)
}

// ReportRejection records a Warning Event on owner for applyErr, once per new rejection (see
// NewRejection); conds and generation are owner's status before this reconcile.
func ReportRejection(recorder events.EventRecorder, owner runtime.Object, conds []metav1.Condition, generation int64, applyErr error) {
	if applyErr != nil && NewRejection(conds, inferencev1alpha1.ConditionDegraded, generation, applyErr.Error()) {
		recorder.Eventf(owner, nil, corev1.EventTypeWarning, "ApplyFailed", "Apply", "%s", applyErr.Error())
	}
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
