/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

// Condition reasons.
const (
	ReasonAvailable        = "Available"
	ReasonUnavailable      = "Unavailable"
	ReasonRollingOut       = "RollingOut"
	ReasonRolledOut        = "RolledOut"
	ReasonApplied          = "Applied"
	ReasonApplyRejected    = "ApplyRejected"
	ReasonDeploymentAbsent = "DeploymentAbsent"
)

// Status is the status the operator wants for isvc, given its live Deployment (nil when absent)
// and the error of this reconcile's applies. Conditions keep their lastTransitionTime while their
// status stays the same, so an unchanged world yields an unchanged status.
func Status(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, applyErr error) *acv1alpha1.InferenceServiceApplyConfiguration {
	conds := append([]metav1.Condition(nil), isvc.Status.Conditions...)
	gen := isvc.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&conds, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
	}

	var ready, progressing bool
	var readyReplicas int32
	switch {
	case live == nil:
		set(inferencev1alpha1.ConditionReady, metav1.ConditionFalse, ReasonDeploymentAbsent, "the Deployment does not exist yet")
		set(inferencev1alpha1.ConditionProgressing, metav1.ConditionTrue, ReasonRollingOut, "creating the Deployment")
		progressing = true
	default:
		readyReplicas = live.Status.ReadyReplicas
		want := ptr.Deref(live.Spec.Replicas, 1)
		progressing = live.Status.ObservedGeneration < live.Generation ||
			live.Status.UpdatedReplicas < want || live.Status.Replicas > live.Status.UpdatedReplicas
		ready = live.Status.AvailableReplicas > 0 || (want == 0 && !progressing)
		if ready {
			set(inferencev1alpha1.ConditionReady, metav1.ConditionTrue, ReasonAvailable, "the runtime has available replicas")
		} else {
			set(inferencev1alpha1.ConditionReady, metav1.ConditionFalse, ReasonUnavailable, "no replica of the runtime is available yet")
		}
		if progressing {
			set(inferencev1alpha1.ConditionProgressing, metav1.ConditionTrue, ReasonRollingOut, "the Deployment is rolling out")
		} else {
			set(inferencev1alpha1.ConditionProgressing, metav1.ConditionFalse, ReasonRolledOut, "the Deployment is rolled out")
		}
	}
	if applyErr != nil {
		set(inferencev1alpha1.ConditionDegraded, metav1.ConditionTrue, ReasonApplyRejected, ownership.Truncate(applyErr.Error(), ownership.ConditionMessageLimit))
	} else {
		set(inferencev1alpha1.ConditionDegraded, metav1.ConditionFalse, ReasonApplied, "every object was applied")
	}

	phase := inferencev1alpha1.PhasePending
	switch {
	case applyErr != nil:
		phase = inferencev1alpha1.PhaseDegraded
	case ready && !progressing:
		phase = inferencev1alpha1.PhaseReady
	case progressing:
		phase = inferencev1alpha1.PhaseProgressing
	}

	status := acv1alpha1.InferenceServiceStatus().
		WithObservedGeneration(gen).
		WithEndpoint(Endpoint(isvc)).
		WithPhase(phase)
	// Note: zero is left out, as the typed extraction of the live status drops it (omitempty);
	// sending it would make the owned and desired status differ forever.
	if readyReplicas > 0 {
		status.WithReadyReplicas(readyReplicas)
	}
	for _, c := range conds {
		if !owns(c.Type) {
			continue
		}
		status.WithConditions(metav1ac.Condition().
			WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).WithMessage(c.Message).
			WithObservedGeneration(c.ObservedGeneration).WithLastTransitionTime(c.LastTransitionTime))
	}
	return acv1alpha1.InferenceService(isvc.Name, isvc.Namespace).WithStatus(status)
}

// owns lists the condition types this reconciler writes; others (written by other controllers
// or by the rollout gate) are left to their owners.
func owns(t string) bool {
	switch t {
	case inferencev1alpha1.ConditionReady, inferencev1alpha1.ConditionProgressing, inferencev1alpha1.ConditionDegraded:
		return true
	}
	return false
}

func (r *Reconciler) reconcileStatus(ctx context.Context, isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, applyErr error) error {
	owned, err := acv1alpha1.ExtractInferenceServiceStatus(isvc, r.Applier.FieldManager)
	if err != nil {
		return err
	}
	_, err = r.Applier.ApplyIfChangedStatus(ctx, owned, Status(isvc, live, applyErr))
	return err
}
