/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package inferenceservice reconciles an InferenceService into a Deployment, a Service and,
// with autoscaling, a HorizontalPodAutoscaler, all by server-side apply under one field manager.
package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/rollout"
)

// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices/status,verbs=get;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler turns an InferenceService into its workload.
type Reconciler struct {
	Client   client.Client
	Applier  ownership.Applier
	Recorder events.EventRecorder
	// Gate holds pod-template changes back until the runtime is idle (rolloutPolicy.waitForIdle).
	Gate *rollout.Gate
	// Migrator hands the records-based operator's ownership to the field manager, once.
	Migrator ownership.Migrator
	// EmitScrapeAnnotations adds prometheus.io/* hints to the pod template.
	EmitScrapeAnnotations bool

	// lastStatus is, per InferenceService, the last status this process wrote and the
	// resourceVersion it was computed from, until the cache has moved past it (see
	// reconcileStatus).
	lastStatus sync.Map
}

// SetupWithManager watches InferenceServices and the objects they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&inferencev1alpha1.InferenceService{}, builder.WithPredicates(ownership.SpecOrMetadataChanged)).
		Owns(&appsv1.Deployment{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&corev1.Service{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}, builder.WithPredicates(r.Applier.Written.Predicate())).
		WithOptions(opts).
		Named("inferenceservice").
		Complete(r)
}

// Reconcile reads the InferenceService, computes the desired objects, applies those whose owned
// fields differ, and reports status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	isvc := &inferencev1alpha1.InferenceService{}
	if err := r.Client.Get(ctx, req.NamespacedName, isvc); err != nil {
		if apierrors.IsNotFound(err) {
			r.lastStatus.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !isvc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // garbage collection removes what it owns
	}

	live, err := r.liveDeployment(ctx, isvc)
	if err != nil {
		return ctrl.Result{}, err
	}
	var rejected []error
	applied, deferred, err := r.reconcileDeployment(ctx, isvc, live)
	if err != nil {
		rejected = append(rejected, err)
	} else if applied != nil {
		live = applied
	}
	if err := r.reconcileService(ctx, isvc); err != nil {
		rejected = append(rejected, err)
	}
	if err := r.reconcileHPA(ctx, isvc); err != nil {
		rejected = append(rejected, err)
	}
	applyErr := errors.Join(rejected...)
	ownership.ReportRejection(r.Recorder, isvc, isvc.Status.Conditions, isvc.Generation, applyErr)
	if err := r.reconcileStatus(ctx, isvc, live, applyErr, deferred); err != nil {
		return ctrl.Result{}, err
	}
	// A rejection by validation will not heal by retrying the same spec; anything else might.
	if applyErr != nil && !ownership.Permanent(rejected) {
		return ctrl.Result{}, applyErr
	}
	if deferred != nil {
		return ctrl.Result{RequeueAfter: deferred.RequeueAfter}, nil
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) liveDeployment(ctx context.Context, isvc *inferencev1alpha1.InferenceService) (*appsv1.Deployment, error) {
	live := &appsv1.Deployment{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(isvc), live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

var replicasPath = fieldpath.MakePathOrDie("spec", "replicas")

// replicas decides what the apply says about spec.replicas.
//
// Note: with autoscaling, the operator keeps the live value until another manager (the HPA, or
// a person through the scale subresource) owns the field, and then leaves it out. Dropping it
// while the operator is its only owner would delete it and the Deployment would fall back to one
// replica: this is the handover the server-side apply documentation describes for autoscalers.
func (r *Reconciler) replicas(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment) *int32 {
	as := isvc.Spec.Autoscaling
	if as == nil {
		return ptr.To(ptr.Deref(isvc.Spec.Replicas, 1))
	}
	if live == nil {
		return ptr.To(ptr.Deref(as.MinReplicas, 1))
	}
	if len(ownership.OtherOwners(live, r.Applier.FieldManager, replicasPath)) > 0 {
		return nil
	}
	return ptr.To(ptr.Deref(live.Spec.Replicas, ptr.Deref(as.MinReplicas, 1)))
}

// reconcileDeployment applies the Deployment when the owned fields differ, and then returns it as
// the API server answered, so that the status of this reconcile describes the Deployment as it is
// now, not as the cache had it before the write. It also returns the gate's decision when it held
// the pod template back.
//
// Note: without the answer, the first reconcile reported DeploymentAbsent (and a spec change
// reported the old generation as rolled out) and the Deployment's own event brought a second status
// write per object: 2.3 status writes per InferenceService during convergence instead of 1.
func (r *Reconciler) reconcileDeployment(ctx context.Context, isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment) (*appsv1.Deployment, *rollout.Decision, error) {
	in := Inputs{
		EmitScrapeAnnotations: r.EmitScrapeAnnotations,
		Ready:                 live != nil && live.Status.ReadyReplicas > 0,
		Replicas:              r.replicas(isvc, live),
	}
	desired, err := Deployment(isvc, in)
	if err != nil {
		return nil, nil, fmt.Errorf("Deployment %s: %w", isvc.Name, err)
	}
	var owned any
	var deferred *rollout.Decision
	if live != nil {
		if live, err = r.Migrator.MigrateIfNeeded(ctx, isvc, "InferenceService", live, desired); err != nil {
			return nil, nil, err
		}
		extracted, err := appsv1ac.ExtractDeployment(live, r.Applier.FieldManager)
		if err != nil {
			return nil, nil, err
		}
		if desired, err = keepStartupProtection(isvc, in, desired, extracted); err != nil {
			return nil, nil, err
		}
		if deferred, err = r.gate(ctx, isvc, desired, extracted); err != nil {
			return nil, nil, err
		}
		owned = extracted
	}
	sent, err := r.Applier.ApplyIfChanged(ctx, ownership.Change{Owner: isvc, Live: liveObject(live), Owned: owned, Desired: desired})
	if err != nil {
		return nil, deferred, fmt.Errorf("Deployment apply rejected by the API server: %w", err)
	}
	if !sent {
		return live, deferred, nil
	}
	log.FromContext(ctx).V(1).Info("applied", "kind", "Deployment")
	// The apply decoded the server's answer into desired: the whole Deployment as written.
	applied := &appsv1.Deployment{}
	if err := convert(desired, applied); err != nil || applied.Generation == 0 {
		return live, deferred, nil //nolint:nilerr // the status then uses what was read; the next event corrects it
	}
	return applied, deferred, nil
}

// gate holds a pod-template change back while the rollout gate says so: desired then carries the
// template the operator owns now, with everything else new, so the rest converges and nothing is
// half-applied. It returns the decision when it held the template back.
//
// Note: "would roll" is the owned template against the desired one, never a hash annotation, so
// a pure removal of a key is gated, and another tool's change (restartedAt) is not.
func (r *Reconciler) gate(ctx context.Context, isvc *inferencev1alpha1.InferenceService, desired, owned *appsv1ac.DeploymentApplyConfiguration) (*rollout.Decision, error) {
	if !rollout.Enabled(isvc) || r.Gate == nil || owned.Spec == nil || owned.Spec.Template == nil {
		return nil, nil
	}
	same, err := ownership.OwnedEqualsDesired(owned.Spec.Template, desired.Spec.Template)
	if err != nil || same {
		return nil, err
	}
	var since *time.Time
	if c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionRolloutDeferred); c != nil && c.Status == metav1.ConditionTrue {
		since = &c.LastTransitionTime.Time
	}
	d, err := r.Gate.Decide(ctx, isvc, isvc.Name, PortName, since)
	if err != nil || d.Roll {
		return nil, err
	}
	desired.Spec.Template = owned.Spec.Template
	return &d, nil
}

// keepStartupProtection keeps do-not-disrupt on a template that has it when dropping it would be
// the template's only change: pods that became Ready are not rolled just to lose the hint; it
// leaves with the next roll that happens for another reason.
func keepStartupProtection(isvc *inferencev1alpha1.InferenceService, in Inputs, desired, owned *appsv1ac.DeploymentApplyConfiguration) (*appsv1ac.DeploymentApplyConfiguration, error) {
	if !StartupProtected(isvc) || owned.Spec == nil || owned.Spec.Template == nil || owned.Spec.Template.Annotations[AnnotationDoNotDisrupt] != "true" {
		return desired, nil
	}
	if desired.Spec.Template.Annotations[AnnotationDoNotDisrupt] == "true" {
		return desired, nil
	}
	in.KeepStartupProtection = true
	kept, err := Deployment(isvc, in)
	if err != nil {
		return nil, err
	}
	same, err := ownership.OwnedEqualsDesired(owned.Spec.Template, kept.Spec.Template)
	if err != nil || !same {
		return desired, err
	}
	return kept, nil
}

func (r *Reconciler) reconcileService(ctx context.Context, isvc *inferencev1alpha1.InferenceService) error {
	return ownership.Sync(ctx, r.Applier, r.Client, isvc, client.ObjectKeyFromObject(isvc), &corev1.Service{}, corev1ac.ExtractService, Service(isvc))
}

func (r *Reconciler) reconcileHPA(ctx context.Context, isvc *inferencev1alpha1.InferenceService) error {
	desired, err := HPA(isvc)
	if err != nil {
		return fmt.Errorf("HorizontalPodAutoscaler %s: %w", isvc.Name, err)
	}
	live := &autoscalingv2.HorizontalPodAutoscaler{}
	exists := true
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(isvc), live); apierrors.IsNotFound(err) {
		exists = false
	} else if err != nil {
		return err
	}
	if desired == nil {
		if exists && metav1.IsControlledBy(live, isvc) {
			return client.IgnoreNotFound(r.Client.Delete(ctx, live, client.Preconditions{UID: &live.UID}))
		}
		return nil
	}
	c := ownership.Change{Owner: isvc, Desired: desired}
	if exists {
		owned, err := autoscalingv2ac.ExtractHorizontalPodAutoscaler(live, r.Applier.FieldManager)
		if err != nil {
			return err
		}
		c.Live, c.Owned = live, owned
	}
	return r.Applier.ApplyChange(ctx, c)
}

// liveObject keeps a nil Deployment a nil interface.
func liveObject(d *appsv1.Deployment) client.Object {
	if d == nil {
		return nil
	}
	return d
}

// syncMap maps an object to a resourceVersion, safe for concurrent reconciles.
