/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// ReasonProgressDeadlineExceeded is the Deployment controller's reason for a rollout that passed
// spec.progressDeadlineSeconds; both kinds report it as Stalled.
const ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"

// Rollout is what a live Deployment says of its rollout, as both kinds read it.
type Rollout struct {
	// Want is spec.replicas; Updated, Available and Ready are the status' counts.
	Want, Updated, Available, Ready int32
	// Rolling is true until every pod runs the current template and is available: the Deployment
	// controller has not seen the current generation, fewer pods than wanted are updated, old
	// pods remain, or updated pods are not available yet.
	Rolling bool
	// DeadlineExceeded is true when the Deployment controller reports ProgressDeadlineExceeded for
	// the current generation.
	DeadlineExceeded bool
}

// RolloutOf reads d's rollout.
//
// Note: the same rule as `kubectl rollout status`, which is what a person checks by hand.
func RolloutOf(d *appsv1.Deployment) Rollout {
	r := Rollout{Want: ptr.Deref(d.Spec.Replicas, 1), Updated: d.Status.UpdatedReplicas,
		Available: d.Status.AvailableReplicas, Ready: d.Status.ReadyReplicas}
	current := d.Status.ObservedGeneration >= d.Generation
	r.Rolling = !current || r.Updated < r.Want || d.Status.Replicas > r.Updated || r.Available < r.Updated
	for _, c := range d.Status.Conditions {
		if current && c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == ReasonProgressDeadlineExceeded {
			r.DeadlineExceeded = true
		}
	}
	return r
}

// Counts says how far the rollout is, for condition messages: "1 of 2 pods on the current
// template, 1 available".
func (r Rollout) Counts() string {
	return fmt.Sprintf("%d of %d pods on the current template, %d available", r.Updated, r.Want, r.Available)
}
