/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package modelrouter reconciles a ModelRouter into the router-proxy ConfigMap, Deployment and
// Service, all by server-side apply under one field manager.
package modelrouter

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/converge"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
	"github.com/llmkube/operator/controllers/retry"
	"github.com/llmkube/operator/controllers/status"
)

// Note: secrets get/list/watch is for a metadata-only watch (builder.OnlyMetadata and
// PartialObjectMetadata gets): the reconciler checks that a backend's credentials Secret exists,
// so that a missing one is reported instead of breaking every proxy pod through envFrom. The API
// server and the cache never hand the operator a Secret's data.

// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=modelrouters,verbs=get;list;watch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=modelrouters/status,verbs=get;patch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=modelrouters/finalizers,verbs=update
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch

// Note: the proxy's Role grants get/list/watch on endpointslices; RBAC lets the operator create
// such a Role only because it holds those verbs itself (the last marker above), not through the
// escalate or bind verbs, which it does not have.

// Field indexes on ModelRouters, by the names of the objects their backends reference.
const (
	IndexInferenceServiceRef  = "spec.backends.inferenceServiceRef"
	IndexCredentialsSecretRef = "spec.backends.external.credentialsSecretRef"
)

// Reconciler turns a ModelRouter into its proxy.
type Reconciler struct {
	Client   client.Client
	Applier  ownership.Applier
	Recorder events.EventRecorder
	// EmitScrapeAnnotations adds prometheus.io/* hints for the proxy's metrics port.
	EmitScrapeAnnotations bool
	// Image is the proxy image when spec.proxy.image is not set; DefaultImage() when empty.
	Image string

	// statusWrites deduplicates status writes while the cache lags behind the last one.
	statusWrites status.Writes
	// DriftRepair is how often a converged object is reconciled again (retry.Refused.Resync).
	DriftRepair time.Duration

	// refused is the backoff of writes the API server refused.
	refused *retry.Refused
}

// SetupWithManager watches ModelRouters, the objects they own, and the InferenceServices and
// Secrets (metadata only) their backends reference.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	r.refused = retry.NewRefused()
	r.refused.Resync = r.DriftRepair
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &inferencev1alpha1.ModelRouter{}, IndexInferenceServiceRef, func(o client.Object) []string {
		var out []string
		for _, b := range o.(*inferencev1alpha1.ModelRouter).Spec.Backends {
			if b.InferenceServiceRef != nil {
				out = append(out, b.InferenceServiceRef.Name)
			}
		}
		return out
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &inferencev1alpha1.ModelRouter{}, IndexCredentialsSecretRef, func(o client.Object) []string {
		var out []string
		for _, b := range o.(*inferencev1alpha1.ModelRouter).Spec.Backends {
			if b.External != nil && b.External.CredentialsSecretRef != nil {
				out = append(out, b.External.CredentialsSecretRef.Name)
			}
		}
		return out
	}); err != nil {
		return err
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return ctrl.NewControllerManagedBy(mgr).
		For(&inferencev1alpha1.ModelRouter{}, builder.WithPredicates(status.SpecOrMetadataChanged)).
		Owns(&appsv1.Deployment{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&corev1.Service{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&corev1.ConfigMap{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&corev1.ServiceAccount{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&rbacv1.Role{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&rbacv1.RoleBinding{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Watches(&inferencev1alpha1.InferenceService{}, handler.EnqueueRequestsFromMapFunc(r.referencing(IndexInferenceServiceRef))).
		Watches(secret, handler.EnqueueRequestsFromMapFunc(r.referencing(IndexCredentialsSecretRef)), builder.OnlyMetadata).
		WithOptions(opts).
		Named("modelrouter").
		Complete(r)
}

// referencing maps an object to the ModelRouters of its namespace whose backends name it.
func (r *Reconciler) referencing(index string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		routers := &inferencev1alpha1.ModelRouterList{}
		if err := r.Client.List(ctx, routers, client.InNamespace(o.GetNamespace()), client.MatchingFields{index: o.GetName()}); err != nil {
			log.FromContext(ctx).Error(err, "listing ModelRouters that reference an object", "index", index, "name", o.GetName())
			return nil
		}
		out := make([]reconcile.Request, 0, len(routers.Items))
		for _, mr := range routers.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mr.Namespace, Name: mr.Name}})
		}
		return out
	}
}

// Reconcile is the shared skeleton (converge.Loop) with the ModelRouter's own steps (kind).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	l := converge.Loop[*inferencev1alpha1.ModelRouter, planned, *appsv1.Deployment]{
		Kind: kind{r}, Name: "ModelRouter", New: func() *inferencev1alpha1.ModelRouter { return &inferencev1alpha1.ModelRouter{} },
		Client: r.Client, Applier: r.Applier, Recorder: r.Recorder, Refused: r.refused, Writes: &r.statusWrites,
	}
	return l.Reconcile(ctx, req)
}

// planned is the plan of one ModelRouter with what it was made from.
type planned struct {
	obs  *Observed
	plan *Plan
}

// kind is the ModelRouter's part of the loop; what its apply leaves for the status is the proxy
// Deployment as the API server last answered (nil: none).
type kind struct{ r *Reconciler }

func (k kind) Plan(ctx context.Context, rd client.Reader, router *inferencev1alpha1.ModelRouter) (planned, error) {
	obs, err := Observe(ctx, rd, router)
	if err != nil {
		return planned{}, err
	}
	p, err := PlanFor(obs, Flags{EmitScrapeAnnotations: k.r.EmitScrapeAnnotations, Image: k.r.Image})
	return planned{obs: obs, plan: p}, err
}

func (k kind) Apply(ctx context.Context, router *inferencev1alpha1.ModelRouter, pl planned) (*appsv1.Deployment, []error) {
	r, p, live := k.r, pl.plan, pl.obs.Deployment
	if p.Refused != nil {
		// The proxy Deployment's name is taken: its Service would select someone else's pods, its
		// routing document and access would serve them. Nothing is applied.
		return nil, []error{p.Refused}
	}
	if len(p.Unserved) > 0 {
		// Routing without the LLMKube fields would route otherwise than the manifest says; the
		// proxy already running (this operator's or LLMKube's) keeps the document it has. One
		// Warning per generation, as the status condition says it for as long as it lasts.
		if c := meta.FindStatusCondition(router.Status.Conditions, inferencev1alpha1.ConditionStalled); c == nil ||
			c.Reason != ReasonUnservedField || c.ObservedGeneration != router.Generation {
			r.Recorder.Eventf(router, nil, corev1.EventTypeWarning, ReasonUnservedField, "Plan", "%s", UnservedMessage(p.Unserved))
		}
		return live, nil
	}
	// Each object converges on its own, and plan.Run holds what needs an object that was not
	// applied (the Deployment without its ConfigMap, ServiceAccount or binding; the Service
	// without the Deployment), withdrawing what the router controls of it after a refusal.
	var steps []plan.Step
	for _, o := range p.Objects() {
		s := plan.Step{Object: o}
		if o.Kind == "Deployment" {
			// Its own write: migration, and the API server's answer kept for the status.
			s.Send = func(ctx context.Context) error {
				applied, err := r.reconcileDeployment(ctx, router, live, p)
				if applied != nil {
					live = applied
				}
				return err
			}
		}
		steps = append(steps, s)
	}
	failures := plan.Run(ctx, r.Applier, r.Client, router, steps, func(ctx context.Context, o plan.Object) error {
		if o.Kind == "Deployment" {
			live = nil // no status is read from a proxy that serves someone else's document
		}
		return o.DeleteControlled(ctx, r.Client, r.Applier.Uncached(r.Client), router)
	})
	return live, failures
}

func (kind) Status(router *inferencev1alpha1.ModelRouter, pl planned, live *appsv1.Deployment, failures []error) runtime.ApplyConfiguration {
	return StatusFor(pl.plan, live, failures)
}

func (kind) OwnedStatus(router *inferencev1alpha1.ModelRouter, manager string) (any, error) {
	return acv1alpha1.ExtractModelRouterStatus(router, manager)
}

func (kind) Conditions(router *inferencev1alpha1.ModelRouter) []metav1.Condition {
	return router.Status.Conditions
}

func (kind) StatusWritten(*inferencev1alpha1.ModelRouter, *appsv1.Deployment) {}

func (kind) RequeueAfter(*appsv1.Deployment) time.Duration { return 0 }

// reconcileDeployment applies the proxy Deployment when the owned fields differ, and returns it as
// the API server answered (live when nothing was sent).
func (r *Reconciler) reconcileDeployment(ctx context.Context, router *inferencev1alpha1.ModelRouter, live *appsv1.Deployment, p *Plan) (*appsv1.Deployment, error) {
	key := types.NamespacedName{Namespace: router.Namespace, Name: Name(router)}
	desired := p.Deployment()
	c := ownership.Change{Owner: router, Desired: desired}
	if live != nil {
		var err error
		if live, err = ownership.MigrateIfNeeded(ctx, r.Applier.Migrator, router, "ModelRouter", live, desired); err != nil {
			return nil, err
		}
		extracted, err := appsv1ac.ExtractDeployment(live, r.Applier.FieldManager)
		if err != nil {
			return nil, ownership.Fail("Deployment", key, ownership.StepExtract, err)
		}
		c.Live, c.Owned = live, extracted
	}
	if err := r.Applier.ApplyChange(ctx, c); err != nil {
		return nil, err
	}
	if applied, ok := ownership.Answer(c.Desired, &appsv1.Deployment{}); ok {
		return applied, nil
	}
	return live, nil
}
