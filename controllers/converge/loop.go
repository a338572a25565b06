/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package converge is the reconcile skeleton every kind shares, written once: read the object,
// plan it (the kind's Observe and PlanFor, the functions kubectl llmkube calls too), apply the plan
// through ownership with each object converging on its own, report what failed, write the status
// once per change, and requeue. A kind supplies only what is its own (Kind).
package converge

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/retry"
	"github.com/llmkube/operator/controllers/status"
)

// Kind is what one kind (O, its Go type) brings to the loop. P is its plan with whatever was
// observed for it; A is what its apply leaves for the status (the Deployment as written, say).
type Kind[O client.Object, P, A any] interface {
	// Plan reads, through r, what the plan of o depends on and plans it.
	Plan(ctx context.Context, r client.Reader, o O) (P, error)
	// Apply sends the plan. Each object converges on its own: a failure of one is returned among
	// failures and never stops the others.
	Apply(ctx context.Context, o O, p P) (applied A, failures []error)
	// Status is the status wanted for o once p was applied.
	Status(o O, p P, applied A, failures []error) runtime.ApplyConfiguration
	// OwnedStatus is what the field manager owns of o's status now.
	OwnedStatus(o O, manager string) (any, error)
	// Conditions are o's current conditions (a repeated failure is reported once).
	Conditions(o O) []metav1.Condition
	// StatusWritten runs after a status write changed o (Normal Events on transitions).
	StatusWritten(o O, applied A)
	// RequeueAfter is the kind's own wait before the next look (a rollout the gate deferred); 0
	// when it has none.
	RequeueAfter(applied A) time.Duration
}

// Loop reconciles objects of one kind.
type Loop[O client.Object, P, A any] struct {
	Kind Kind[O, P, A]
	// Name is the kind's name, for errors; New makes an empty O.
	Name     string
	New      func() O
	Client   client.Client
	Applier  ownership.Applier
	Recorder events.EventRecorder
	// Refused is the backoff of writes the API server refused; one shared by the process when
	// nil (a test that drives Reconcile without the manager).
	Refused *retry.Refused
	// Writes deduplicates status writes while the cache lags behind the last one; it outlives
	// the Loop value, which a reconciler may build per call.
	Writes *status.Writes
}

// Reconcile is the skeleton: read, plan, apply, report, status, requeue.
func (l *Loop[O, P, A]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := l.New()
	if err := l.Client.Get(ctx, req.NamespacedName, o); err != nil {
		if apierrors.IsNotFound(err) {
			l.Writes.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !o.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil // garbage collection removes what it owns
	}
	p, err := l.Kind.Plan(ctx, l.Applier.Through(l.Client), o)
	if err != nil {
		return ctrl.Result{}, err
	}
	// One OwnershipMigrated Event for whatever this reconcile migrated, not one per object.
	actx, migrated := ownership.WithMigrationReport(ctx)
	applied, failures := l.Kind.Apply(actx, o, p)
	migrated.Emit(l.Recorder, o, l.Applier.Migrator)
	status.ReportFailure(l.Recorder, o, l.Kind.Conditions(o), o.GetGeneration(), failures)
	written, err := l.Writes.Apply(ctx, l.Applier, o, l.Kind.Status(o, p, applied, failures), func() (any, error) {
		owned, err := l.Kind.OwnedStatus(o, l.Applier.FieldManager)
		if err != nil {
			return nil, ownership.Fail(l.Name, req.NamespacedName, ownership.StepExtract, err)
		}
		return owned, nil
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if written {
		l.Kind.StatusWritten(o, applied)
	}
	res, err := l.Refused.Result(req, failures)
	if d := l.Kind.RequeueAfter(applied); err == nil && d > 0 && (res.RequeueAfter == 0 || d < res.RequeueAfter) {
		res.RequeueAfter = d
	}
	return res, err
}
