/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/rollout"
	"github.com/llmkube/operator/controllers/status"
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
// and what failed in this reconcile. Conditions keep their lastTransitionTime while their
// status stays the same, so an unchanged world yields an unchanged status.
//
// deferred is the rollout gate's decision when it held the pod template back: it becomes the
// RolloutDeferred condition, which is left out (so removed) once the template lands. gateway is
// the GatewayReady condition (see gatewayCondition), nil without spec.gateway.
func Status(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, failures []error, deferred *rollout.Decision, gateway *metav1.Condition) *acv1alpha1.InferenceServiceApplyConfiguration {
	return statusOf(isvc, live, failures, deferred, gateway, "", "", 0)
}

// StatusFor is Status for the plan p: when p is blocked (its Model is missing, its Deployment is
// not its own), Ready and Progressing say why, the phase is Pending and no endpoint is published
// (nor, for a refused Deployment, a replica count); ModelResolved is set whenever spec.modelRef is.
func StatusFor(p *Plan, live *appsv1.Deployment, failures []error, deferred *rollout.Decision, gateway *metav1.Condition) *acv1alpha1.InferenceServiceApplyConfiguration {
	desired := statusOf(p.isvc, live, failures, deferred, gateway, p.Blocked, p.BlockedMessage, p.ModelGeneration)
	if p.Refused != nil {
		// The Deployment of that name is someone else's: no replica count describes this
		// InferenceService.
		desired.Status.Ready = nil
	}
	if refused(failures, "Service") {
		// The endpoint would name someone else's Service.
		desired.Status.Endpoint = nil
	}
	if c := modelResolved(p.isvc, p.Blocked == ReasonModelNotFound); c != nil {
		desired.Status.WithConditions(c)
	}
	return desired
}

func statusOf(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, failures []error, deferred *rollout.Decision, gateway *metav1.Condition, blocked, blockedMessage string, modelGeneration int64) *acv1alpha1.InferenceServiceApplyConfiguration {
	conds := append([]metav1.Condition(nil), isvc.Status.Conditions...)
	gen := isvc.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&conds, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
	}
	a := assess(isvc, live, failures, deferred, blocked, blockedMessage)
	meta.SetStatusCondition(&conds, metav1.Condition{Type: inferencev1alpha1.ConditionReady, Status: a.ready.status,
		Reason: a.ready.Reason, Message: a.ready.Message, ObservedGeneration: a.observed})
	set(inferencev1alpha1.ConditionProgressing, a.progressing.status, a.progressing.Reason, a.progressing.Message)
	status.SetDegraded(&conds, gen, failures)
	status.SetHealth(&conds, gen, a.health)

	if deferred != nil {
		set(inferencev1alpha1.ConditionRolloutDeferred, metav1.ConditionTrue, deferred.Reason, deferred.Message)
	} else {
		meta.RemoveStatusCondition(&conds, inferencev1alpha1.ConditionRolloutDeferred)
	}
	if gateway != nil {
		set(inferencev1alpha1.ConditionGatewayReady, gateway.Status, gateway.Reason, gateway.Message)
	} else {
		meta.RemoveStatusCondition(&conds, inferencev1alpha1.ConditionGatewayReady)
	}

	readyReplicas, wanted, observed := a.readyReplicas, a.wanted, a.observed
	phase := a.phase(len(failures) > 0, live != nil)
	st := acv1alpha1.InferenceServiceStatus().
		WithObservedGeneration(observed).
		WithModel(ModelShort(isvc)).
		WithSelector(labels.SelectorFromSet(SelectorLabels(isvc.Name)).String()).
		WithPhase(phase).
		WithReady(fmt.Sprintf("%d/%d", readyReplicas, wanted))
	if blocked == "" || live != nil {
		// Note: a blocked plan publishes no Service, so no endpoint either.
		st.WithEndpoint(Endpoint(isvc))
	}
	// Note: zero is left out, as the typed extraction of the live status drops it (omitempty);
	// sending it would make the owned and desired status differ forever.
	if readyReplicas > 0 {
		st.WithReadyReplicas(readyReplicas)
	}
	// The Model the pods run moves only once the template that carries it rolled out.
	if a.progressing.Reason == ReasonRolledOut && a.health.Reconciling == nil && modelGeneration > 0 {
		st.WithLoadedModel(acv1alpha1.LoadedModel().WithName(isvc.Spec.ModelRef).WithGeneration(modelGeneration))
	} else if l := isvc.Status.LoadedModel; l != nil && l.Name == isvc.Spec.ModelRef {
		st.WithLoadedModel(acv1alpha1.LoadedModel().WithName(l.Name).WithGeneration(l.Generation))
	}
	if live != nil && live.Status.Replicas > 0 {
		st.WithReplicas(live.Status.Replicas)
	}
	st.WithConditions(status.ConditionsToApply(conds, owns)...)
	return acv1alpha1.InferenceService(isvc.Name, isvc.Namespace).WithStatus(st)
}

// ModelShort is the MODEL column of kubectl get isvc: the Model spec.modelRef names, or the inline
// source without its scheme (hf://org/repo/model.gguf is org/repo/model.gguf).
func ModelShort(isvc *inferencev1alpha1.InferenceService) string {
	if isvc.Spec.ModelRef != "" {
		return isvc.Spec.ModelRef
	}
	src := isvc.Spec.Model.Source
	if _, rest, ok := strings.Cut(src, "://"); ok {
		return rest
	}
	return src
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
		inferencev1alpha1.ConditionRolloutDeferred, inferencev1alpha1.ConditionGatewayReady,
		inferencev1alpha1.ConditionReconciling, inferencev1alpha1.ConditionStalled:
		return true
	}
	return false
}

// Reasons of the Normal Events on an InferenceService's key transitions.
const (
	EventReady  = "Ready"
	EventScaled = "Scaled"
)

// reportTransitions records a Normal Event when the status just written moves the InferenceService
// to Ready, or changes the number of runtime pods wanted (kubectl scale, an autoscaler, a spec
// change): the story kubectl describe tells. before is the Deployment as read before this
// reconcile's apply, live as the API server answered it.
//
// Note: the number of pods it was is read from the Deployment before the apply, not from the
// status: a reconcile that follows a scale right after its own status write may read the
// InferenceService before that write reached the cache, with no status yet, and the scale
// went unreported (seen under load in envtest).
func (r *Reconciler) reportTransitions(isvc *inferencev1alpha1.InferenceService, before, live *appsv1.Deployment) {
	if r.Recorder == nil || live == nil {
		return
	}
	wasReady := meta.IsStatusConditionTrue(isvc.Status.Conditions, inferencev1alpha1.ConditionReady)
	if !wasReady && live.Status.AvailableReplicas > 0 {
		r.Recorder.Eventf(isvc, nil, corev1.EventTypeNormal, EventReady, "Reconcile",
			"the runtime serves: %d of %d pods ready; endpoint %s", live.Status.ReadyReplicas, ptr.Deref(live.Spec.Replicas, 1), Endpoint(isvc))
	}
	if before == nil {
		return
	}
	if was, now := ptr.Deref(before.Spec.Replicas, 1), ptr.Deref(live.Spec.Replicas, 1); was != now {
		r.Recorder.Eventf(isvc, nil, corev1.EventTypeNormal, EventScaled, "Reconcile", "runtime pods wanted: %d, was %d", now, was)
	}
}

// refused says whether one of failures is the refusal of the object of kind the InferenceService
// would write (ownership.NotControlled).
func refused(failures []error, kind string) bool {
	for _, err := range failures {
		var f *ownership.Failure
		if errors.As(err, &f) && f.Kind == kind && ownership.IsNotControlled(err) {
			return true
		}
	}
	return false
}
