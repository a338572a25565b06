/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
)

// This file is the one plan of a ModelRouter: Observe reads what it depends on, PlanFor turns that
// into everything the operator applies. The reconciler applies the plan; kubectl llmkube (diff,
// migration plan, owners) shows it. Nothing else builds what the operator applies.

// Flags are the operator's flags that shape the plan.
type Flags struct {
	EmitScrapeAnnotations bool
	// Image is the operator's --router-proxy-image (DefaultImage() when empty).
	Image string
}

// Observed is everything the plan depends on beside the flags.
type Observed struct {
	Router *inferencev1alpha1.ModelRouter
	// Found is what exists of the router's references.
	Found Lookup
	// Deployment is the live proxy Deployment; nil when absent.
	Deployment *appsv1.Deployment
}

// Observe reads, through r, what the plan of router depends on: the InferenceServices and the
// metadata of the Secrets its backends name, and its live Deployment. The reconciler passes its
// cache; kubectl llmkube passes an API client.
func Observe(ctx context.Context, r client.Reader, router *inferencev1alpha1.ModelRouter) (*Observed, error) {
	found, err := lookup(ctx, r, router)
	if err != nil {
		return nil, err
	}
	obs := &Observed{Router: router, Found: found}
	key := types.NamespacedName{Namespace: router.Namespace, Name: Name(router)}
	d := &appsv1.Deployment{}
	switch err := r.Get(ctx, key, d); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, ownership.Fail("Deployment", key, ownership.StepRead, err)
	default:
		obs.Deployment = d
	}
	return obs, nil
}

// lookup reads the referenced InferenceServices and the metadata of the referenced Secrets.
func lookup(ctx context.Context, r client.Reader, router *inferencev1alpha1.ModelRouter) (Lookup, error) {
	found := Lookup{InferenceServices: map[string]*inferencev1alpha1.InferenceService{}, Secrets: map[string]bool{}, Unserved: map[string]string{}}
	for _, b := range router.Spec.Backends {
		switch {
		case b.InferenceServiceRef != nil:
			isvc := &inferencev1alpha1.InferenceService{}
			key := types.NamespacedName{Namespace: router.Namespace, Name: b.InferenceServiceRef.Name}
			err := r.Get(ctx, key, isvc)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return found, ownership.Fail("InferenceService", key, ownership.StepRead, err)
			}
			found.InferenceServices[isvc.Name] = isvc
			why, err := uncontrolled(ctx, r, isvc)
			if err != nil {
				return found, err
			}
			if why != "" {
				found.Unserved[isvc.Name] = why
			}
		case b.External != nil && b.External.CredentialsSecretRef != nil:
			secret := &metav1.PartialObjectMetadata{}
			secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
			key := types.NamespacedName{Namespace: router.Namespace, Name: b.External.CredentialsSecretRef.Name}
			err := r.Get(ctx, key, secret)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return found, ownership.Fail("Secret", key, ownership.StepRead, err)
			}
			found.Secrets[key.Name] = true
		}
	}
	return found, nil
}

// Plan is everything the operator applies for one ModelRouter, in the order it applies it.
type Plan struct {
	router *inferencev1alpha1.ModelRouter
	in     Inputs
	// Resolutions are how the backends resolved (the ResolvedRefs condition and status.backends).
	Resolutions []Resolution
	// Access are the proxy's ServiceAccount, Role and RoleBinding; ConfigMap is the routing
	// document; Service is applied after the Deployment.
	Access    []plan.Object
	ConfigMap plan.Object
	Service   plan.Object
	// Refused is set when a Deployment of the proxy's name exists and the router does not control
	// it (ownership.NotControlled): nothing of the plan is applied and the status reads nothing of
	// that Deployment.
	Refused error
	// Unserved are the fields of LLMKube's ModelRouter API the router sets and the proxy does not
	// route by (UnservedFields): nothing of the plan is applied, so a proxy already running keeps
	// its routing document, and the router is Stalled with ReasonUnservedField.
	Unserved []inferenceservice.Unserved

	deploymentNeeds []plan.Ref
}

// PlanFor is the plan of obs.Router: a pure function of what Observe read and the operator's flags.
func PlanFor(obs *Observed, f Flags) (*Plan, error) {
	router := obs.Router
	res := Resolve(router, obs.Found)
	data, err := ConfigData(router, res)
	if err != nil {
		return nil, ownership.Fail("ConfigMap", types.NamespacedName{Namespace: router.Namespace, Name: Name(router)}, ownership.StepBuild, err)
	}
	p := &Plan{
		router:      router,
		in:          Inputs{EmitScrapeAnnotations: f.EmitScrapeAnnotations, Resolutions: res, Image: f.Image},
		Resolutions: res,
		ConfigMap:   plan.Of(ConfigMap(router, data), newConfigMap, corev1ac.ExtractConfigMap),
		Unserved:    UnservedFields(router),
	}
	sa := plan.Of(ServiceAccount(router), newServiceAccount, corev1ac.ExtractServiceAccount)
	role := plan.Of(Role(router), newRole, rbacv1ac.ExtractRole)
	// The binding grants the Role to the ServiceAccount: someone else's Role (Secrets get/list,
	// say) or ServiceAccount in either place would receive it.
	binding := plan.Of(RoleBinding(router), newRoleBinding, rbacv1ac.ExtractRoleBinding).Needing(role.Ref(), sa.Ref())
	p.Access = []plan.Object{sa, role, binding}
	// The proxy runs as the ServiceAccount, with the binding's access, serving the mounted
	// routing document: any of them someone else's would redirect its traffic and credentials.
	p.deploymentNeeds = []plan.Ref{sa.Ref(), binding.Ref(), p.ConfigMap.Ref()}
	// The Service selects the proxy's pods.
	p.Service = plan.Of(Service(router), newService, corev1ac.ExtractService).Needing(p.DeploymentObject().Ref())
	if obs.Deployment != nil {
		if err := ownership.CheckControlledBy(obs.Deployment, "ModelRouter", router); err != nil {
			p.Refused = ownership.Fail("Deployment", types.NamespacedName{Namespace: router.Namespace, Name: Name(router)}, ownership.StepOwnership, err)
		}
	}
	return p, nil
}

// Inputs are the Deployment builder's inputs the plan computed.
func (p *Plan) Inputs() Inputs { return p.in }

// Deployment is the proxy Deployment of the plan; a fresh apply configuration on every call.
//
// Note: its pod template does not depend on the routing document: the proxy rereads the mounted
// document and switches to it, so a routing change rolls no pod.
func (p *Plan) Deployment() *appsv1ac.DeploymentApplyConfiguration {
	return Deployment(p.router, p.in)
}

// DeploymentObject is the plan's Deployment as a plan.Object.
func (p *Plan) DeploymentObject() plan.Object {
	return plan.Of(p.Deployment(), newDeployment, appsv1ac.ExtractDeployment).Needing(p.deploymentNeeds...)
}

// Objects are every object of the plan in the order the reconciler applies them, each with what
// it needs (plan.Run holds an object whose need was not applied).
func (p *Plan) Objects() []plan.Object {
	if p.Refused != nil || len(p.Unserved) > 0 {
		return nil
	}
	out := append([]plan.Object(nil), p.Access...)
	return append(out, p.ConfigMap, p.DeploymentObject(), p.Service)
}

func newServiceAccount() *corev1.ServiceAccount { return &corev1.ServiceAccount{} }
func newRole() *rbacv1.Role                     { return &rbacv1.Role{} }
func newRoleBinding() *rbacv1.RoleBinding       { return &rbacv1.RoleBinding{} }
func newConfigMap() *corev1.ConfigMap           { return &corev1.ConfigMap{} }
func newService() *corev1.Service               { return &corev1.Service{} }
func newDeployment() *appsv1.Deployment         { return &appsv1.Deployment{} }

// uncontrolled says why isvc does not serve what a router would send it ("" when it does): its
// Service and Deployment must exist and be controlled by it. An object of that name it does not
// control (a user's Service selecting another app, a Deployment refused to it) is someone else's,
// and a router sending traffic there would hand that traffic to them.
//
// Note: r is the reconciler's cache read past on a miss (ownership.Applier.Through): the
// InferenceService's own objects are cached, so in steady state this costs no request.
func uncontrolled(ctx context.Context, r client.Reader, isvc *inferencev1alpha1.InferenceService) (string, error) {
	key := client.ObjectKeyFromObject(isvc)
	for _, obj := range []client.Object{&corev1.Service{}, &appsv1.Deployment{}} {
		kind := ownership.KindOfObject(obj)
		switch err := r.Get(ctx, key, obj); {
		case apierrors.IsNotFound(err):
			return fmt.Sprintf("InferenceService %q has no %s yet", isvc.Name, kind), nil
		case err != nil:
			return "", ownership.Fail(kind, key, ownership.StepRead, err)
		}
		if err := ownership.CheckControlledBy(obj, "InferenceService", isvc); err != nil {
			return fmt.Sprintf("%s %s: %v", kind, key, err), nil
		}
	}
	return "", nil
}
