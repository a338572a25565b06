/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/rollout"
	"github.com/llmkube/operator/controllers/status"
)

// Reasons of Progressing and Reconciling beyond those of Ready.
const (
	// ReasonRolloutDeferred: the rollout gate holds the pod-template change back until idle.
	ReasonRolloutDeferred = "RolloutDeferred"
)

// condValue is one condition's status, reason and message.
type condValue struct {
	status metav1.ConditionStatus
	status.Cause
}

func is(s metav1.ConditionStatus, reason, msg string) condValue {
	return condValue{status: s, Cause: status.Cause{Reason: reason, Message: msg}}
}

// assessment is everything the status says about the workload, decided in one place so that
// Ready, Progressing, Reconciling, Stalled, the phase and observedGeneration never contradict
// each other. docs/health.md has the same table with every condition's value (K1 to K8).
type assessment struct {
	ready, progressing condValue
	health             status.Health
	// observed is status.observedGeneration (and Ready's): the generation the status describes.
	observed              int64
	readyReplicas, wanted int32
}

// assess decides the assessment of isvc. The states, in the order they are decided:
//
//	state     | when                                           | Ready          | Progressing          | Reconciling          | Stalled
//	blocked   | the plan is blocked (Model missing)            | False (reason) | False (reason)       | -                    | True (reason)
//	refused   | a failure is NotControlled or ApplyRejected    | as computed    | as computed          | -                    | True (failure)
//	creating  | no Deployment yet                              | False          | True RollingOut      | True RollingOut      | -
//	deferred  | the gate held the template back (or failed)    | as served      | True RolloutDeferred | True RolloutDeferred | -
//	stuck     | the Deployment's ProgressDeadlineExceeded      | as served      | False (that reason)  | -                    | True
//	rolling   | pods not all on the current template           | as served      | True RollingOut      | True (counts)        | -
//	serving   | rolled out                                     | True Available | False RolledOut      | -                    | -
//
// Note: while the template is held back (deferred, or the gate failed), observedGeneration stays
// at the generation the workload runs (promise O15): the new generation is not realized. Any
// other failure keeps the object Reconciling (retried), as Flux's ProgressingWithRetry does.
func assess(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, failures []error, deferred *rollout.Decision, blocked, blockedMessage string) assessment {
	a := assessment{observed: isvc.Generation, wanted: wantedReplicas(isvc)}
	held := deferred != nil || status.GateFailed(failures)
	if held {
		a.observed = isvc.Status.ObservedGeneration
	}
	switch {
	case blocked != "" && live == nil:
		a.ready = is(metav1.ConditionFalse, blocked, blockedMessage)
	case live == nil:
		a.ready = is(metav1.ConditionFalse, ReasonDeploymentAbsent, "the Deployment does not exist yet")
		a.progressing = is(metav1.ConditionTrue, ReasonRollingOut, "creating the Deployment")
	default:
		a.assessDeployment(live)
	}
	switch {
	case blocked != "":
		// Nothing rolls out while the plan is blocked: the Deployment is left as it is.
		a.progressing = is(metav1.ConditionFalse, blocked, blockedMessage)
		a.health.Stalled = &status.Cause{Reason: blocked, Message: blockedMessage}
	case deferred != nil:
		a.progressing = is(metav1.ConditionTrue, ReasonRolloutDeferred, deferred.Message)
	case held:
		a.progressing = is(metav1.ConditionTrue, status.ReasonRolloutGateFailed,
			"the pod-template change waits: the rollout gate could not decide (see Degraded)")
	}
	if a.health.Stalled == nil {
		a.health.Stalled = status.StalledBy(failures)
	}
	if a.progressing.status == metav1.ConditionTrue {
		c := a.progressing.Cause
		a.health.Reconciling = &c
	} else if a.health.Stalled == nil {
		a.health.Reconciling = status.RetriedBy(failures)
	}
	return a
}

// assessDeployment reads Ready and Progressing from the live Deployment: Ready while a replica
// is available, Progressing until every pod runs the current template.
func (a *assessment) assessDeployment(live *appsv1.Deployment) {
	r := status.RolloutOf(live)
	a.readyReplicas, a.wanted = r.Ready, r.Want
	if r.Available > 0 || (r.Want == 0 && !r.Rolling) {
		a.ready = is(metav1.ConditionTrue, ReasonAvailable, "the runtime has available replicas")
	} else {
		a.ready = is(metav1.ConditionFalse, ReasonUnavailable, "no replica of the runtime is available yet")
	}
	switch {
	case r.DeadlineExceeded:
		a.progressing = is(metav1.ConditionFalse, status.ReasonProgressDeadlineExceeded,
			"the Deployment's rollout passed its progress deadline: "+r.Counts()+"; see the pods' events")
		a.health.Stalled = &a.progressing.Cause
	case r.Rolling:
		a.progressing = is(metav1.ConditionTrue, ReasonRollingOut, "the Deployment is rolling out: "+r.Counts())
	default:
		a.progressing = is(metav1.ConditionFalse, ReasonRolledOut, "the Deployment is rolled out")
	}
}

// phase is the one-word summary for kubectl get: Degraded on a failure or a stall of a created
// workload, Ready when serving and realized, Progressing while reconciling, Pending otherwise (a
// blocked InferenceService that has no Deployment yet included).
func (a *assessment) phase(failed, created bool) inferencev1alpha1.Phase {
	switch {
	case failed || (a.health.Stalled != nil && created):
		return inferencev1alpha1.PhaseDegraded
	case a.health.Reconciling != nil:
		return inferencev1alpha1.PhaseProgressing
	case a.ready.status == metav1.ConditionTrue && a.health.Stalled == nil:
		return inferencev1alpha1.PhaseReady
	}
	return inferencev1alpha1.PhasePending
}
