/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/rollout"
)

// Condition reasons.
const (
	ReasonAvailable        = "Available"
	ReasonUnavailable      = "Unavailable"
	ReasonRollingOut       = "RollingOut"
	ReasonRolledOut        = "RolledOut"
	ReasonDeploymentAbsent = "DeploymentAbsent"
)

// Status is the status the operator wants for isvc, given its live Deployment (nil when absent)
// and the error of this reconcile's applies. Conditions keep their lastTransitionTime while their
// status stays the same, so an unchanged world yields an unchanged status.
//
// deferred is the rollout gate's decision when it held the pod template back: it becomes the
// RolloutDeferred condition, which is left out (so removed) once the template lands.
func Status(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, applyErr error, deferred *rollout.Decision) *acv1alpha1.InferenceServiceApplyConfiguration {
	conds := append([]metav1.Condition(nil), isvc.Status.Conditions...)
	gen := isvc.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&conds, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
	}

	var ready, progressing bool
	var readyReplicas int32
	wanted := wantedReplicas(isvc)
	switch {
	case live == nil:
		set(inferencev1alpha1.ConditionReady, metav1.ConditionFalse, ReasonDeploymentAbsent, "the Deployment does not exist yet")
		set(inferencev1alpha1.ConditionProgressing, metav1.ConditionTrue, ReasonRollingOut, "creating the Deployment")
		progressing = true
	default:
		readyReplicas = live.Status.ReadyReplicas
		want := ptr.Deref(live.Spec.Replicas, 1)
		wanted = want
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
	ownership.SetDegraded(&conds, gen, applyErr)

	if deferred != nil {
		set(inferencev1alpha1.ConditionRolloutDeferred, metav1.ConditionTrue, deferred.Reason, deferred.Message)
	} else {
		meta.RemoveStatusCondition(&conds, inferencev1alpha1.ConditionRolloutDeferred)
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
		WithPhase(phase).
		WithReady(fmt.Sprintf("%d/%d", readyReplicas, wanted))
	// Note: zero is left out, as the typed extraction of the live status drops it (omitempty);
	// sending it would make the owned and desired status differ forever.
	if readyReplicas > 0 {
		status.WithReadyReplicas(readyReplicas)
	}
	status.WithConditions(ownership.ConditionsToApply(conds, owns)...)
	return acv1alpha1.InferenceService(isvc.Name, isvc.Namespace).WithStatus(status)
}

// wantedReplicas is the number of runtime pods the operator asks for before the Deployment
// exists: spec.replicas, or the autoscaler's minimum. Once it exists, the Deployment's own
// spec.replicas (which an autoscaler moves) is the number wanted.
func wantedReplicas(isvc *inferencev1alpha1.InferenceService) int32 {
	if as := isvc.Spec.Autoscaling; as != nil {
		return ptr.Deref(as.MinReplicas, 1)
	}
	return ptr.Deref(isvc.Spec.Replicas, 1)
}

// owns lists the condition types this reconciler writes; others (written by other controllers
// or by the rollout gate) are left to their owners.
func owns(t string) bool {
	switch t {
	case inferencev1alpha1.ConditionReady, inferencev1alpha1.ConditionProgressing, inferencev1alpha1.ConditionDegraded,
		inferencev1alpha1.ConditionRolloutDeferred:
		return true
	}
	return false
}

// reconcileStatus applies the status when the owned status differs from the wanted one.
//
// Note: when the cache still holds the exact object (resourceVersion) the last status write of
// this process was computed from, that write has not reached the cache yet: comparing with the
// stale status would send the same status again (with a new lastTransitionTime). So a status equal
// to that last write (times aside) is not sent again; a different one is. It does not wait for the
// write's own watch event, which the reconciler filters out (status-only updates do not
// reconcile). This took convergence from 1.04-1.5 status writes per InferenceService to 1.
func (r *Reconciler) reconcileStatus(ctx context.Context, isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, applyErr error, deferred *rollout.Decision, modelMissing bool) error {
	key := client.ObjectKeyFromObject(isvc)
	desired := Status(isvc, live, applyErr, deferred)
	withModelStatus(desired, isvc, modelMissing, live != nil)
	wanted, err := statusFingerprint(desired)
	if err != nil {
		return err
	}
	if v, ok := r.lastStatus.Load(key); ok {
		last := v.(statusWrite)
		if last.from == isvc.ResourceVersion && bytes.Equal(last.status, wanted) {
			return nil // our last write says this already; the cache has not caught up with it
		}
		if last.from != isvc.ResourceVersion {
			r.lastStatus.Delete(key)
		}
	}
	owned, err := acv1alpha1.ExtractInferenceServiceStatus(isvc, r.Applier.FieldManager)
	if err != nil {
		return err
	}
	sent, err := r.Applier.ApplyIfChangedStatus(ctx, owned, desired)
	// The apply decoded the server's answer into desired; an unchanged resourceVersion means the
	// write changed nothing.
	if sent && err == nil && desired.ResourceVersion != nil && *desired.ResourceVersion != isvc.ResourceVersion {
		r.lastStatus.Store(key, statusWrite{from: isvc.ResourceVersion, status: wanted})
	}
	return err
}

// statusWrite is the last status this process wrote for an InferenceService, and the
// resourceVersion of the object it was computed from.
type statusWrite struct {
	from   string
	status []byte
}

// statusFingerprint is the status without the conditions' lastTransitionTime, which a status
// computed from a stale object sets anew each second.
func statusFingerprint(ac *acv1alpha1.InferenceServiceApplyConfiguration) ([]byte, error) {
	st := *ac.Status
	st.Conditions = append(st.Conditions[:0:0], st.Conditions...)
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = nil
	}
	return json.Marshal(st)
}
