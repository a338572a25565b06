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
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
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
)

// Status is the status the operator wants for router, given its live proxy Deployment (nil when
// absent), the backends' resolutions and what failed in this reconcile. Conditions keep
// their lastTransitionTime while their status stays the same, so an unchanged world yields an
// unchanged status.
func Status(router *inferencev1alpha1.ModelRouter, live *appsv1.Deployment, res []Resolution, failures []error) *acv1alpha1.ModelRouterApplyConfiguration {
	return statusOf(router, live, res, failures, nil)
}

// StatusFor is Status for the plan p: when p's Deployment is refused, Ready is False with the
// refusal's reason and nothing of that Deployment (someone else's pods) is read.
func StatusFor(p *Plan, live *appsv1.Deployment, failures []error) *acv1alpha1.ModelRouterApplyConfiguration {
	if p.Refused != nil {
		live = nil
	}
	return statusOf(p.router, live, p.Resolutions, failures, p.Refused)
}

func statusOf(router *inferencev1alpha1.ModelRouter, live *appsv1.Deployment, res []Resolution, failures []error, refused error) *acv1alpha1.ModelRouterApplyConfiguration {
	conds := append([]metav1.Condition(nil), router.Status.Conditions...)
	gen := router.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&conds, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
	}

	switch {
	case refused != nil:
		set(inferencev1alpha1.ConditionReady, metav1.ConditionFalse, status.ReasonNotControlled, status.Truncate(refused.Error(), status.ConditionMessageLimit))
	case live == nil:
		set(inferencev1alpha1.ConditionReady, metav1.ConditionFalse, ReasonDeploymentAbsent, "the proxy Deployment does not exist yet")
	case live.Status.AvailableReplicas > 0 || (ptr.Deref(live.Spec.Replicas, 1) == 0 && live.Status.ObservedGeneration >= live.Generation):
		set(inferencev1alpha1.ConditionReady, metav1.ConditionTrue, ReasonAvailable, "the proxy has available replicas")
	default:
		set(inferencev1alpha1.ConditionReady, metav1.ConditionFalse, ReasonUnavailable, "no replica of the proxy is available yet")
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
	case inferencev1alpha1.ConditionReady, inferencev1alpha1.ConditionResolvedRefs, inferencev1alpha1.ConditionDegraded, ConditionLimitsShared:
		return true
	}
	return false
}
