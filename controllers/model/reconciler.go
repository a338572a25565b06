/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package model reports the status of a Model: admission already validated its spec, and the
// InferenceServices that name it do the work (their runtime downloads it into the Model's cache
// claim and loads it), so the Model's reconciler says what the operator knows of that work: that
// it saw the spec, which InferenceServices use the Model, and whether any of them has a ready pod.
package model

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/status"
)

// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=models,verbs=get;list;watch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=models/status,verbs=get;patch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices,verbs=get;list;watch

// Reconciler writes a Model's status.
type Reconciler struct {
	Client  client.Client
	Applier ownership.Applier

	// statusWrites deduplicates status writes while the cache lags behind the last one.
	statusWrites status.Writes
}

// SetupWithManager watches Models, and the InferenceServices that name them (through the
// spec.modelRef index controllers.Setup registers, inferenceservice.IndexModelRef).
//
// Note: a Model's own status write does not move its generation, so it does not come back as a
// reconcile; an InferenceService enqueues its Model only when what the Model reports of it can
// change (see usageChanged), not on each of its own status writes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&inferencev1alpha1.Model{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&inferencev1alpha1.InferenceService{}, usersOf{}).
		WithOptions(opts).
		Named("model").
		Complete(r)
}

// usersOf enqueues the Model an InferenceService names; on an update, the Model it named before
// too (a changed spec.modelRef changes both Models' users).
type usersOf struct{}

func (usersOf) Create(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueModelOf(e.Object, q)
}

func (usersOf) Update(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	older, newer := e.ObjectOld.(*inferencev1alpha1.InferenceService), e.ObjectNew.(*inferencev1alpha1.InferenceService)
	if !usageChanged(older, newer) {
		return
	}
	enqueueModelOf(older, q)
	enqueueModelOf(newer, q)
}

func (usersOf) Delete(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueModelOf(e.Object, q)
}

func (usersOf) Generic(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueModelOf(e.Object, q)
}

var _ handler.EventHandler = usersOf{}

func enqueueModelOf(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if isvc, ok := o.(*inferencev1alpha1.InferenceService); ok && isvc.Spec.ModelRef != "" {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: isvc.Namespace, Name: isvc.Spec.ModelRef}})
	}
}

// usageChanged says whether an InferenceService's update can change its Model's status: another
// Model named, its readiness turned, it stalled or stopped stalling (a Stalled user holds no
// Model Reconciling), or the Model generation its pods run moved (Serving).
func usageChanged(older, newer *inferencev1alpha1.InferenceService) bool {
	return older.Spec.ModelRef != newer.Spec.ModelRef || ready(older) != ready(newer) || stalled(older) != stalled(newer) ||
		!equality.Semantic.DeepEqual(older.Status.LoadedModel, newer.Status.LoadedModel)
}

// Reconcile applies the Model's status when what the field manager owns differs from it, and not
// again while the cache lags behind this process's last write of it (status.Writes).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &inferencev1alpha1.Model{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		r.statusWrites.Forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	users := &inferencev1alpha1.InferenceServiceList{}
	if err := r.Client.List(ctx, users, client.InNamespace(m.Namespace), client.MatchingFields{inferenceservice.ModelRefIndex: m.Name}); err != nil {
		return ctrl.Result{}, ownership.Fail("InferenceService", req.NamespacedName, ownership.StepRead, err)
	}
	if wait := settling(m, len(users.Items), time.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	_, err := r.statusWrites.Apply(ctx, r.Applier, m, Status(m, users.Items), func() (any, error) {
		return acv1alpha1.ExtractModelStatus(m, r.Applier.FieldManager)
	})
	return ctrl.Result{}, err
}

// Settle is how long a new Model that no InferenceService names yet waits for its first status.
//
// Note: a Model is applied together with the InferenceService that names it (one file, one
// GitOps sync), and the InferenceService's create reaches the operator a moment later. Writing
// NotInUse at once, then Loading when the InferenceService shows up, costs every new pair a second
// Model status write (1.84-1.95 per Model in `make bench-peer`); waiting this long writes it once.
// A Model nobody uses gets its status this much later, which nothing waits on: it has no
// status.observedGeneration until then, and kstatus reads a resource without one as Current.
const Settle = 2 * time.Second

// settling is how much longer m waits before its first status is written (0: write now): only a
// Model without any status, named by no InferenceService, younger than Settle. Its creation time
// is in whole seconds, so it looks up to a second older than it is and waits at most Settle.
func settling(m *inferencev1alpha1.Model, users int, now time.Time) time.Duration {
	if users > 0 || m.Status.ObservedGeneration != 0 || len(m.Status.Conditions) > 0 {
		return 0
	}
	return max(0, Settle-now.Sub(m.CreationTimestamp.Time))
}
