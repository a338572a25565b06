/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
)

// decidedDeletions remembers, per InferenceService UID, the generation whose deletions were
// decided against the API server in this process, so that they are read there once per change.
type decidedDeletions struct{ m sync.Map }

// owed says whether the deletions of isvc's plan must be decided against the API server.
//
// Note: the caches hold only objects labelled as the operator's, so an HPA written by a release
// before the label, or by the records-based operator, is invisible to them: a cache read would
// call it absent and it would stay for good, fighting the Deployment's replicas. Reading the API
// server on every reconcile would cost a GET per reconcile in steady state. A deletion is owed
// only after a spec change, so it is decided live while the status describes an earlier
// generation (the reconcile that wrote observedGeneration decided it), or the last reconcile
// failed (Degraded=True), and then once per generation in this process. A restart over converged
// InferenceServices reads nothing.
func (d *decidedDeletions) owed(isvc *inferencev1alpha1.InferenceService) bool {
	if g, ok := d.m.Load(isvc.UID); ok && g.(int64) == isvc.Generation {
		return false
	}
	// A status no reconcile wrote yet (observedGeneration 0) is a new InferenceService: nothing
	// it controls can exist, so its first reconcile reads nothing either.
	owed := isvc.Status.ObservedGeneration != 0 && isvc.Status.ObservedGeneration != isvc.Generation ||
		meta.IsStatusConditionTrue(isvc.Status.Conditions, inferencev1alpha1.ConditionDegraded)
	if !owed {
		d.m.Delete(isvc.UID) // the status is the record now
	}
	return owed
}

func (d *decidedDeletions) decided(uid types.UID, generation int64) { d.m.Store(uid, generation) }

// deleteOwed sends the deletions of the plan (the HPA without spec.autoscaling), each decided by
// identity: the object named is read (from the API server when a deletion may be owed), and
// deleted only when isvc controls it, with a UID precondition.
func (r *Reconciler) deleteOwed(ctx context.Context, isvc *inferencev1alpha1.InferenceService, deletions []plan.Deletion) []error {
	if len(deletions) == 0 {
		return nil
	}
	owed := r.deletions.owed(isvc)
	var failures []error
	for _, d := range deletions {
		if err := r.deleteControlled(ctx, isvc, d, owed); err != nil {
			failures = append(failures, ownership.Fail(d.GVK.Kind, d.Key, ownership.StepApply, err))
		}
	}
	if owed && len(failures) == 0 {
		r.deletions.decided(isvc.UID, isvc.Generation)
	}
	return failures
}

// deleteControlled deletes the object d names when isvc controls it (plan.DeleteControlled); live
// reads the API server (uncached) instead of the cache.
func (r *Reconciler) deleteControlled(ctx context.Context, isvc *inferencev1alpha1.InferenceService, d plan.Deletion, live bool) error {
	o, err := r.Client.Scheme().New(d.GVK)
	if err != nil {
		return err
	}
	var reader client.Reader = r.Client
	if live {
		reader = r.Applier.Uncached(r.Client)
	}
	if err := plan.DeleteControlled(ctx, r.Client, reader, isvc, d.Key, o.(client.Object)); err != nil {
		return fmt.Errorf("deleting %s %s: %w", d.GVK.Kind, d.Key.Name, err)
	}
	return nil
}
