/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
	"github.com/llmkube/operator/controllers/runtimes"
	"github.com/llmkube/operator/controllers/status"
)

// This file is the one plan of an InferenceService: Observe reads what it depends on, PlanFor
// turns that into everything the operator applies or deletes and the reason it cannot run, if
// any. The reconciler applies the plan; kubectl llmkube (diff, migration plan, owners) shows it.
// Nothing else builds what the operator applies.

// Flags are the operator's flags that shape the plan.
type Flags struct {
	FieldManager          string
	EmitScrapeAnnotations bool
}

// Observed is everything the plan depends on beside the flags.
type Observed struct {
	ISVC *inferencev1alpha1.InferenceService
	// Model is the Model spec.modelRef names; nil with an inline spec.model or when it is missing.
	Model *inferencev1alpha1.Model
	// ModelMissing is true when spec.modelRef names a Model that does not exist.
	ModelMissing bool
	// Deployment is the live Deployment; nil when absent.
	Deployment *appsv1.Deployment
	// Claim is the live cache claim of the Model (its size never shrinks); nil when absent or
	// when there is no Model.
	Claim *corev1.PersistentVolumeClaim
	// GatewayCRDsMissing are the kinds spec.gateway writes that the API server does not serve.
	// Observe does not fill it: the reconciler knows from its watches, the plugin asks discovery.
	GatewayCRDsMissing []schema.GroupVersionKind
}

// Observe reads, through r, what the plan of isvc depends on: the Model it names, its live
// Deployment and its Model's cache claim. The reconciler passes its cache, read past on a miss
// (ownership.Applier.Through); kubectl llmkube passes an API client.
func Observe(ctx context.Context, r client.Reader, isvc *inferencev1alpha1.InferenceService) (*Observed, error) {
	obs := &Observed{ISVC: isvc}
	if isvc.Spec.ModelRef != "" {
		m := &inferencev1alpha1.Model{}
		key := client.ObjectKey{Namespace: isvc.Namespace, Name: isvc.Spec.ModelRef}
		switch err := r.Get(ctx, key, m); {
		case apierrors.IsNotFound(err):
			obs.ModelMissing = true
		case err != nil:
			return nil, ownership.Fail("Model", key, ownership.StepRead, err)
		default:
			obs.Model = m
		}
	}
	if claim := CacheClaim(isvc, obs.Model); claim != nil && obs.Model != nil {
		c := &corev1.PersistentVolumeClaim{}
		key := client.ObjectKey{Namespace: isvc.Namespace, Name: *claim.Name}
		switch err := r.Get(ctx, key, c); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, ownership.Fail("PersistentVolumeClaim", key, ownership.StepRead, err)
		default:
			obs.Claim = c
		}
	}
	d := &appsv1.Deployment{}
	switch err := r.Get(ctx, client.ObjectKeyFromObject(isvc), d); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, ownership.Fail("Deployment", client.ObjectKeyFromObject(isvc), ownership.StepRead, err)
	default:
		obs.Deployment = d
	}
	return obs, nil
}

// Plan is everything the operator does for one InferenceService, in the order it does it.
type Plan struct {
	isvc *inferencev1alpha1.InferenceService
	in   Inputs
	// Blocked says why the workload cannot be planned (ReasonModelNotFound, or
	// status.ReasonNotControlled with Refused); "" when it can. A blocked plan creates no
	// Deployment (an existing one is left as it is) and publishes nothing that routes traffic to
	// it: no Service, no InferencePool or HTTPRoute, no endpoint.
	Blocked, BlockedMessage string
	// Unserved are the fields that block the plan with ReasonUnservedField.
	Unserved []Unserved
	// Overridden are the fields whose flag spec.extraArgs sets itself: the operator leaves its
	// own out, and the reconciler says so in an Event.
	Overridden []runtimes.Override
	// Refused is set when a Deployment of the InferenceService's name exists and the
	// InferenceService does not control it (ownership.NotControlled): the plan is Blocked, applies
	// nothing that targets, selects or mounts for that workload (no claim, Service, HPA, pool or
	// route), deletes the HPA the InferenceService controls (it would scale a workload the
	// operator does not control), and the status reads nothing of that Deployment.
	Refused error
	// ModelGeneration is the generation of the Model spec.modelRef names that the plan carries;
	// 0 with an inline model or a missing Model.
	ModelGeneration int64
	// KeptSize is the size the Model's cache claim keeps when this InferenceService asks for
	// less (a Model's claim never shrinks); nil otherwise.
	KeptSize *resource.Quantity
	// Guard is true when the Deployment's apply must carry the live resourceVersion (see replicas).
	Guard bool
	// Before are the objects applied before the Deployment (the model-cache claim).
	Before []plan.Object
	// After are the objects applied after it (Service, HPA).
	After []plan.Object
	// Gateway are the InferencePool and the HTTPRoute spec.gateway asks for, in that order.
	Gateway []plan.Object
	// Delete are the objects deleted when the InferenceService controls them (the HPA without
	// spec.autoscaling or with a refused workload, the inline model's claim the cache no longer
	// asks for).
	Delete []plan.Deletion
	// GatewayDelete are the InferencePool and the HTTPRoute deleted without spec.gateway, when the
	// InferenceService controls them (in that order). The reconciler deletes exactly these
	// (reconcileGateway), and kubectl llmkube diff shows them.
	//
	// Note: apart from Delete, as their deletion is owed by another rule (GatewayReady, see
	// removeGateway) and their kinds may not be served.
	GatewayDelete []plan.Deletion
	// GatewayMissingCRDs are the kinds spec.gateway needs and the cluster does not serve.
	GatewayMissingCRDs []schema.GroupVersionKind
}

// PlanFor is the plan of obs.ISVC: a pure function of what Observe read and the operator's flags.
func PlanFor(obs *Observed, f Flags) (*Plan, error) {
	isvc := obs.ISVC
	key := client.ObjectKeyFromObject(isvc)
	p := &Plan{isvc: isvc}
	if obs.Model != nil {
		p.ModelGeneration = obs.Model.Generation
	}
	if obs.ModelMissing {
		p.Blocked = ReasonModelNotFound
		p.BlockedMessage = fmt.Sprintf("Model %s does not exist in namespace %s: create it; until then no Deployment is created, an existing one is left as it is, and no Service or gateway route is published", isvc.Spec.ModelRef, isvc.Namespace)
	}
	if u := UnservedFields(isvc, obs.Model); len(u) > 0 && p.Blocked == "" {
		p.Blocked, p.BlockedMessage, p.Unserved = ReasonUnservedField, UnservedMessage(u), u
	}
	live := obs.Deployment
	if live != nil {
		if err := ownership.CheckControlledBy(live, "InferenceService", isvc); err != nil {
			p.Refused = ownership.Fail("Deployment", key, ownership.StepOwnership, err)
			p.Blocked, p.BlockedMessage = status.ReasonNotControlled, p.Refused.Error()
			live = nil
		}
	}
	replicas, guard, err := replicasFor(isvc, live, f.FieldManager)
	if err != nil {
		return nil, ownership.Fail("Deployment", key, ownership.StepExtract, err)
	}
	p.Guard = guard
	p.in = Inputs{
		Model:                 obs.Model,
		EmitScrapeAnnotations: f.EmitScrapeAnnotations,
		Ready:                 live != nil && live.Status.ReadyReplicas > 0,
		Replicas:              replicas,
	}
	if claim := CacheClaim(isvc, obs.Model); claim != nil && p.Refused == nil {
		if obs.Model != nil {
			p.KeptSize = keepLargerSize(claim, obs.Claim)
		}
		p.Before = append(p.Before, plan.Of(claim, newPVC, corev1ac.ExtractPersistentVolumeClaim))
	}
	if p.Blocked == "" {
		// Fail early on a spec the builder refuses, so every caller sees the same error.
		if _, err := Deployment(isvc, p.in); err != nil {
			return nil, ownership.Fail("Deployment", key, ownership.StepBuild, err)
		}
		p.Overridden = argOverrides(isvc, obs.Model)
		// The Service selects the workload's pods.
		p.After = append(p.After, plan.Of(Service(isvc), newService, corev1ac.ExtractService).Needing(p.DeploymentRef()))
	}
	if cacheOf(isvc) != cacheClaim || isvc.Spec.ModelRef != "" {
		// The claim an inline model's Cached cache had: the spec no longer asks for it (Ephemeral,
		// a claim of the user's, a Model's claim, no cache), so it is deleted if isvc controls it.
		p.Delete = append(p.Delete, plan.Deletion{GVK: corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
			Key: client.ObjectKey{Namespace: isvc.Namespace, Name: inlineClaimName(isvc)}})
	}
	hpa, err := HPA(isvc)
	if err != nil {
		return nil, ownership.Fail("HorizontalPodAutoscaler", key, ownership.StepBuild, err)
	}
	if isvc.Spec.Suspend {
		// A suspended InferenceService runs no pod: an autoscaler would scale it back up.
		hpa = nil
	}
	switch {
	case hpa != nil && p.Blocked == "":
		// The HPA scales the workload.
		p.After = append(p.After, plan.Of(hpa, newHPA, autoscalingv2ac.ExtractHorizontalPodAutoscaler).Needing(p.DeploymentRef()))
	case hpa == nil || p.Refused != nil:
		p.Delete = append(p.Delete, plan.Deletion{GVK: autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"), Key: key})
	}
	switch {
	case isvc.Spec.Gateway == nil:
		for _, gvk := range []schema.GroupVersionKind{InferencePoolKind, HTTPRouteKind} {
			p.GatewayDelete = append(p.GatewayDelete, plan.Deletion{GVK: gvk, Key: key})
		}
	case len(obs.GatewayCRDsMissing) > 0:
		p.GatewayMissingCRDs = obs.GatewayCRDsMissing
	case p.Blocked == "":
		// The pool selects the workload's pods; the route sends the Gateway's traffic to the pool:
		// someone else's pool of this name would publish their pods.
		pool := plan.Of(InferencePool(isvc), newPool, extractInferencePool).Needing(p.DeploymentRef())
		p.Gateway = []plan.Object{pool, plan.Of(HTTPRoute(isvc), newRoute, gatewayv1ac.ExtractHTTPRoute).Needing(pool.Ref())}
	}
	return p, nil
}

// DeploymentRef names the plan's Deployment.
func (p *Plan) DeploymentRef() plan.Ref {
	return plan.Ref{Kind: "Deployment", Key: client.ObjectKeyFromObject(p.isvc)}
}

// deploymentNeeds are what the Deployment needs: the pods mount the claims of Before (someone
// else's claim of that name would be mounted).
func (p *Plan) deploymentNeeds() []plan.Ref {
	var out []plan.Ref
	for _, b := range p.Before {
		out = append(out, b.Ref())
	}
	return out
}

// HasDeployment says whether the plan applies a Deployment.
func (p *Plan) HasDeployment() bool { return p.Blocked == "" }

// AppliesDeployment says whether the Deployment is applied once Before was: not when the plan
// has none, nor when an object of Before was refused (ownership.NotControlled), as a cache claim
// of someone else's would be mounted by the pods. The reconciler asks it after applying Before;
// kubectl llmkube diff asks it with what its preview of Before found.
func (p *Plan) AppliesDeployment(beforeRefused bool) bool { return p.HasDeployment() && !beforeRefused }

// MigrationTarget is what the migration of live, a Deployment with legacy traces, takes over (see
// migrationTarget).
func (p *Plan) MigrationTarget(live *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
	return migrationTarget(p.isvc, p.in, live)
}

// Deployment is the Deployment the operator applies when live (nil: absent) is the Deployment
// after any migration: a fresh apply configuration on every call (an apply decodes the server's
// answer into the one it sent), with startup protection kept by keepStartupProtection's rule and,
// with Guard, live's resourceVersion. The rollout gate may still hold its pod template back: that
// depends on the runtime's traffic, not on the plan, and a preview shows what the gate defers.
func (p *Plan) Deployment(live *appsv1.Deployment, fieldManager string) (*appsv1ac.DeploymentApplyConfiguration, error) {
	desired, err := Deployment(p.isvc, p.in)
	if err != nil || live == nil {
		return desired, err
	}
	owned, err := appsv1ac.ExtractDeployment(live, fieldManager)
	if err != nil {
		return nil, err
	}
	if desired, err = keepStartupProtection(p.isvc, p.in, desired, owned); err != nil {
		return nil, err
	}
	if p.Guard {
		desired.WithResourceVersion(live.ResourceVersion)
	}
	return desired, nil
}

// DeploymentObject is Deployment as a plan.Object.
func (p *Plan) DeploymentObject(live *appsv1.Deployment, fieldManager string) (plan.Object, error) {
	d, err := p.Deployment(live, fieldManager)
	if err != nil {
		return plan.Object{}, err
	}
	return plan.Of(d, newDeployment, appsv1ac.ExtractDeployment).Needing(p.deploymentNeeds()...), nil
}

// Objects are every object the plan applies, in order, each with what it needs (plan.Run holds
// an object whose need was not applied): Before, the Deployment when the plan has one, After and
// Gateway. live and fieldManager are as for Deployment.
func (p *Plan) Objects(live *appsv1.Deployment, fieldManager string) ([]plan.Object, error) {
	out := append([]plan.Object(nil), p.Before...)
	if p.HasDeployment() {
		d, err := p.DeploymentObject(live, fieldManager)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	out = append(out, p.After...)
	return append(out, p.Gateway...), nil
}

func newPVC() *corev1.PersistentVolumeClaim          { return &corev1.PersistentVolumeClaim{} }
func newService() *corev1.Service                    { return &corev1.Service{} }
func newHPA() *autoscalingv2.HorizontalPodAutoscaler { return &autoscalingv2.HorizontalPodAutoscaler{} }
func newDeployment() *appsv1.Deployment              { return &appsv1.Deployment{} }
func newPool() *inferencepoolv1.InferencePool        { return &inferencepoolv1.InferencePool{} }
func newRoute() *gatewayv1.HTTPRoute                 { return &gatewayv1.HTTPRoute{} }
