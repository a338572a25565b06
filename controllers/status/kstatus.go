/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

// Cause is why an object is Reconciling or Stalled: a condition's reason and message.
type Cause struct {
	Reason, Message string
}

// Health is what kstatus reads of an object beyond observedGeneration: whether its desired state
// is still being realized (Reconciling) or cannot be (Stalled). Each kind decides it in one place
// from the same inputs that decide its Ready and Progressing conditions.
type Health struct {
	// Reconciling is set while the desired state is not realized yet.
	Reconciling *Cause
	// Stalled is set when the desired state cannot be realized without a person's change; it
	// wins over Reconciling.
	Stalled *Cause
}

// SetHealth writes Reconciling and Stalled into conds from h.
//
// Note: both are "abnormal-true" conditions in kstatus' sense and, as Flux's own kinds do, they
// are removed rather than set to False when they do not hold: a reader that only checks for the
// condition's presence (Argo CD's Lua checks often do) then reads the same answer as kstatus.
// Stalled and Reconciling are never True together: Flux removes Reconciling when it stalls.
func SetHealth(conds *[]metav1.Condition, generation int64, h Health) {
	set := func(t string, c *Cause) {
		if c == nil {
			meta.RemoveStatusCondition(conds, t)
			return
		}
		meta.SetStatusCondition(conds, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: c.Reason,
			Message: Truncate(c.Message, ConditionMessageLimit), ObservedGeneration: generation})
	}
	if h.Stalled != nil {
		h.Reconciling = nil
	}
	set(inferencev1alpha1.ConditionReconciling, h.Reconciling)
	set(inferencev1alpha1.ConditionStalled, h.Stalled)
}

// StalledBy is the first of failures that no retry can fix, as a Cause: an object the operator
// does not control (NotControlled) or an apply the API server refused as invalid
// (ApplyRejected). Only a person's change ends those; every other failure is retried, and keeps
// the object Reconciling. Nil when there is none.
func StalledBy(failures []error) *Cause {
	for _, err := range failures {
		switch r := Reason(err); r {
		case ReasonNotControlled, ReasonApplyRejected:
			return &Cause{Reason: r, Message: err.Error()}
		}
	}
	return nil
}

// RetriedBy is the first of failures as a Cause for Reconciling (a failure the loop retries),
// nil when there is none.
func RetriedBy(failures []error) *Cause {
	if len(failures) == 0 {
		return nil
	}
	return &Cause{Reason: Reason(failures[0]), Message: errors.Join(failures...).Error()}
}

// GateFailed says whether the rollout gate failed in this reconcile: the pod template was then
// held back as a deferral holds it, and the generation is not realized (promise O15).
func GateFailed(failures []error) bool {
	for _, err := range failures {
		var f *ownership.Failure
		if errors.As(err, &f) && f.Step == ownership.StepGate {
			return true
		}
	}
	return false
}
