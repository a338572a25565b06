/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package model reports the status of a Model: admission already validated its spec, and the
// InferenceServices that name it do the work (their runtime downloads it into the Model's cache
// claim), so the Model's own reconciler only says that the operator has seen its generation.
package model

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/status"
)

// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=models,verbs=get;list;watch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=models/status,verbs=get;patch

// ReasonAccepted is the reason of a Ready Model.
const ReasonAccepted = "Accepted"

// Reconciler writes a Model's status.
type Reconciler struct {
	Client  client.Client
	Applier ownership.Applier
}

// SetupWithManager watches Models; a status write does not move the generation, so it does not
// come back as a reconcile.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&inferencev1alpha1.Model{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(opts).
		Named("model").
		Complete(r)
}

// Reconcile applies the Model's status when what the field manager owns differs from it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &inferencev1alpha1.Model{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	owned, err := acv1alpha1.ExtractModelStatus(m, r.Applier.FieldManager)
	if err != nil {
		return ctrl.Result{}, err
	}
	_, err = r.Applier.ApplyIfChangedStatus(ctx, owned, Status(m))
	return ctrl.Result{}, err
}

// Status is the status the operator wants for m: Ready, at m's generation. The Ready condition
// keeps its lastTransitionTime while it stays True, so an unchanged Model yields an unchanged
// status.
func Status(m *inferencev1alpha1.Model) *acv1alpha1.ModelApplyConfiguration {
	conds := append([]metav1.Condition(nil), m.Status.Conditions...)
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type: inferencev1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonAccepted,
		Message:            "the operator accepted the Model; the runtime of each InferenceService that names it downloads it into the cache",
		ObservedGeneration: m.Generation,
	})
	return acv1alpha1.Model(m.Name, m.Namespace).WithStatus(acv1alpha1.ModelKindStatus().
		WithObservedGeneration(m.Generation).
		WithPhase(inferencev1alpha1.PhaseReady).
		WithConditions(status.ConditionsToApply(conds, func(t string) bool { return t == inferencev1alpha1.ConditionReady })...))
}
