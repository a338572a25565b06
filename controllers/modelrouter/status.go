/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/status"
)

// Condition reasons.
const (
	ReasonAvailable        = "Available"
	ReasonUnavailable      = "Unavailable"
	ReasonDeploymentAbsent = "DeploymentAbsent"
	ReasonResolved         = "Resolved"
	ReasonBackendNotFound  = "BackendNotFound"
	// ConditionLimitsShared is True when the clients' limits are counted in a Redis every
	// replica shares, False (PerReplica) when each replica counts alone; absent without limits.
	ConditionLimitsShared  = "LimitsShared"
	ReasonLimitsShared     = "SharedInRedis"
	ReasonLimitsPerReplica = "PerReplica"
	ReasonRollingOut       = "RollingOut"
)

// Status is the status the operator wants for router, given its live proxy Deployment (nil when
// absent), the backends' resolutions and what failed in this reconcile. Conditions keep
// their lastTransitionTime while their status stays the same, so an unchanged world yields an
// unchanged status.
func Status(router *inferencev1alpha1.ModelRouter, live *appsv1.Deployment, res []Resolution, failures []error) *acv1alpha1.ModelRouterApplyConfiguration {
	return statusOf(router, live, res, failures, nil, nil)
}

// StatusFor is Status for the plan p: when p's Deployment is refused, Ready is False with the
// refusal's reason and nothing of that Deployment (someone else's pods) is read.
func StatusFor(p *Plan, live *appsv1.Deployment, failures []error) *acv1alpha1.ModelRouterApplyConfiguration {
	if p.Refused != nil {
		live = nil
	}
	return statusOf(p.router, live, p.Resolutions, failures, p.Refused, p.Unserved)
}

func statusOf(router *inferencev1alpha1.ModelRouter, live *appsv1.Deployment, res []Resolution, failures []error, refused error, unserved []inferenceservice.Unserved) *acv1alpha1.ModelRouterApplyConfiguration {
	conds := append([]metav1.Condition(nil), router.Status.Conditions...)
	gen := router.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&conds, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
	}

	var missing []string
	resolved := 0
	for _, r := range res {
		if r.Resolved {
			resolved++
		}
		if !r.Resolved {
			missing = append(missing, fmt.Sprintf("backend %q: %s", r.Backend.Name, r.Message))
		}
	}
	if len(missing) > 0 {
		set(inferencev1alpha1.ConditionResolvedRefs, metav1.ConditionFalse, ReasonBackendNotFound,
			strings.Join(missing, "; ")+"; the router serves its other backends")
	} else {
		set(inferencev1alpha1.ConditionResolvedRefs, metav1.ConditionTrue, ReasonResolved, "every backend resolves")
	}
	ready, health := assess(live, resolved, missing, failures)
	if refused != nil {
		// The proxy Deployment of that name is someone else's: nothing of it describes this router
		// (the refusal is among failures, so the router is Stalled by it).
		ready = metav1.Condition{Status: metav1.ConditionFalse, Reason: status.ReasonNotControlled, Message: status.Truncate(refused.Error(), status.ConditionMessageLimit)}
	} else if len(unserved) > 0 {
		// Only a change of the spec ends it: Stalled, and not Ready, as the routing the manifest
		// asks for is not what any proxy serves.
		msg := status.Truncate(UnservedMessage(unserved), status.ConditionMessageLimit)
		ready = metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonUnservedField, Message: msg}
		health = status.Health{Stalled: &status.Cause{Reason: ReasonUnservedField, Message: msg}}
	}
	set(inferencev1alpha1.ConditionReady, ready.Status, ready.Reason, ready.Message)
	status.SetHealth(&conds, gen, health)

	if shared, msg, ok := limitsScope(router); ok {
		reason, st := ReasonLimitsShared, metav1.ConditionTrue
		if !shared {
			reason, st = ReasonLimitsPerReplica, metav1.ConditionFalse
		}
		set(ConditionLimitsShared, st, reason, msg)
	} else {
		meta.RemoveStatusCondition(&conds, ConditionLimitsShared)
	}

	status.SetDegraded(&conds, gen, failures)

	st := acv1alpha1.ModelRouterStatus().
		WithObservedGeneration(gen).
		WithEndpoint(Endpoint(router)).
		WithBackendsResolved(fmt.Sprintf("%d/%d", resolved, len(res)))
	st.WithConditions(status.ConditionsToApply(conds, owns)...)
	for _, r := range res {
		// Note: resolved is required (no omitempty), so false is stored and extracted like true and
		// is always sent; url and message are omitempty and left out when empty, as the typed
		// extraction drops them and sending "" would make owned and desired differ forever.
		b := acv1alpha1.BackendStatus().WithName(r.Backend.Name).WithResolved(r.Resolved)
		if r.URL != "" {
			b.WithURL(r.URL)
		}
		if r.Message != "" {
			b.WithMessage(r.Message)
		}
		st.WithBackends(b)
	}
	return acv1alpha1.ModelRouter(router.Name, router.Namespace).WithStatus(st)
}

// owns lists the condition types this reconciler writes; others are left to their owners.
func owns(t string) bool {
	switch t {
	case inferencev1alpha1.ConditionReady, inferencev1alpha1.ConditionResolvedRefs, inferencev1alpha1.ConditionDegraded, ConditionLimitsShared,
		inferencev1alpha1.ConditionReconciling, inferencev1alpha1.ConditionStalled:
		return true
	}
	return false
}

// ReasonNoBackendResolved: not one backend of the router resolves, so the proxy has nothing to
// route to (Ready=False, Stalled=True).
const ReasonNoBackendResolved = "NoBackendResolved"

// assess decides Ready, Reconciling and Stalled of a router in one place, from its proxy
// Deployment (nil: absent), how many backends resolve (and why the others do not) and this
// reconcile's failures:
//
//	state       | Ready                    | Reconciling     | Stalled
//	creating    | False DeploymentAbsent   | True RollingOut | -
//	no backend  | False NoBackendResolved  | -               | True NoBackendResolved
//	refused     | as computed              | -               | True (failure's reason)
//	stuck       | as served                | -               | True ProgressDeadlineExceeded
//	rolling     | as served                | True (counts)   | -
//	serving     | True Available           | -               | -
//
// Note: a router whose every backend is missing answers every request 404: it does not serve, so
// it is not Ready, and only a person's change (the backend's InferenceService, a Secret) ends it,
// so it is Stalled, as an InferenceService whose Model is missing is.
func assess(live *appsv1.Deployment, resolved int, missing []string, failures []error) (metav1.Condition, status.Health) {
	var h status.Health
	var ready metav1.Condition
	switch {
	case live == nil:
		ready = metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonDeploymentAbsent, Message: "the proxy Deployment does not exist yet"}
		h.Reconciling = &status.Cause{Reason: ReasonRollingOut, Message: "creating the proxy Deployment"}
	default:
		r := status.RolloutOf(live)
		if r.Available > 0 || (r.Want == 0 && !r.Rolling) {
			ready = metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonAvailable, Message: "the proxy has available replicas"}
		} else {
			ready = metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonUnavailable, Message: "no replica of the proxy is available yet"}
		}
		switch {
		case r.DeadlineExceeded:
			h.Stalled = &status.Cause{Reason: status.ReasonProgressDeadlineExceeded,
				Message: "the proxy Deployment's rollout passed its progress deadline: " + r.Counts()}
		case r.Rolling:
			h.Reconciling = &status.Cause{Reason: ReasonRollingOut, Message: "the proxy Deployment is rolling out: " + r.Counts()}
		}
	}
	if resolved == 0 && len(missing) > 0 {
		msg := "no backend resolves, so the router has nothing to route to: " + strings.Join(missing, "; ")
		ready = metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonNoBackendResolved, Message: msg}
		h.Stalled = &status.Cause{Reason: ReasonNoBackendResolved, Message: msg}
	}
	if h.Stalled == nil {
		h.Stalled = status.StalledBy(failures)
	}
	if h.Reconciling == nil && h.Stalled == nil {
		h.Reconciling = status.RetriedBy(failures)
	}
	return ready, h
}
