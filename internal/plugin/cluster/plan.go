/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package cluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
	"github.com/llmkube/operator/controllers/status"
)

// This file is what the operator would apply for an InferenceService or a ModelRouter as the
// cluster is now: the kinds' own Observe and PlanFor (the functions the reconcilers call), read
// through the plugin's API client instead of the operator's cache. It adds nothing of its own.

// Operator are the operator's flags that decide what it applies and migrates: the previews are
// right only when they match how the operator runs.
type Operator struct {
	FieldManager          string
	LegacyFieldManagers   []string
	EmitScrapeAnnotations bool
	RouterProxyImage      string
}

// Legacy is the operator's migration of the records-based operator's traces.
func (o Operator) Legacy(adopt bool) ownership.Legacy {
	return ownership.Legacy{FieldManagers: o.LegacyFieldManagers, Adopt: adopt}
}

// Set is the plan of one InferenceService or ModelRouter, in the shape the plugin's commands use.
type Set struct {
	// Owner is isvc/NAME or mr/NAME.
	Owner string
	// Blocked is why the plan has no Deployment (ModelNotFound), with BlockedMessage; "" otherwise.
	Blocked, BlockedMessage string
	// Unresolved are a ModelRouter's backends it routes nothing to, each with why ("backend
	// local: InferenceService "llama" not found").
	Unresolved []string
	// Deployment is what the reconciler hands the migration of the live Deployment (what it
	// applies when there is none); nil when Blocked.
	Deployment *appsv1ac.DeploymentApplyConfiguration
	// Apply is the Deployment the reconciler applies when live (nil: absent) is the Deployment
	// then, e.g. right after the migration; nil when Blocked.
	Apply func(live *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error)
	// Refused is why the plan has no Deployment when its name is taken by a Deployment the owner
	// does not control (an *ownership.Failure naming it, wrapping ownership.NotControlled); nil
	// otherwise.
	Refused error
	// AppliesDeployment says whether the reconciler applies the Deployment once Before was applied,
	// beforeRefused saying whether an object of Before was refused; nil: whenever Apply is set.
	AppliesDeployment func(beforeRefused bool) bool
	// Before and After are the objects applied before and after the Deployment.
	Before, After []plan.Object
	// Delete are the objects deleted when the owner controls them, the InferencePool and the
	// HTTPRoute of a removed spec.gateway included.
	Delete []plan.Deletion
	// SpecLabels and SpecAnnotations are the spec's pod labels and annotations.
	SpecLabels, SpecAnnotations map[string]string
}

// Plan is what the operator would apply for the InferenceService or ModelRouter of objs, read
// through c.
func (c *Client) Plan(ctx context.Context, objs *Objects, op Operator) (*Set, error) {
	if objs.ISVC != nil {
		return ForInferenceService(ctx, c, c.RESTMapper(), objs.ISVC, op)
	}
	return ForModelRouter(ctx, c, objs.Router, op)
}

// ForInferenceService reads what the plan of isvc depends on through c (and, for spec.gateway,
// which kinds the API server serves through mapper), and plans it.
func ForInferenceService(ctx context.Context, c client.Reader, mapper meta.RESTMapper, isvc *inferencev1alpha1.InferenceService, op Operator) (*Set, error) {
	obs, err := inferenceservice.Observe(ctx, c, isvc)
	if err != nil {
		return nil, err
	}
	if isvc.Spec.Gateway != nil && mapper != nil {
		for _, gvk := range []schema.GroupVersionKind{inferenceservice.InferencePoolKind, inferenceservice.HTTPRouteKind} {
			if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
				obs.GatewayCRDsMissing = append(obs.GatewayCRDsMissing, gvk)
			} else if err != nil {
				return nil, err
			}
		}
	}
	return FromObserved(obs, op)
}

// FromObserved is the plan of what was observed.
func FromObserved(obs *inferenceservice.Observed, op Operator) (*Set, error) {
	isvc := obs.ISVC
	p, err := inferenceservice.PlanFor(obs, inferenceservice.Flags{FieldManager: op.FieldManager, EmitScrapeAnnotations: op.EmitScrapeAnnotations})
	if err != nil {
		return nil, err
	}
	s := &Set{
		Owner:   "isvc/" + isvc.Name,
		Blocked: p.Blocked, BlockedMessage: p.BlockedMessage,
		Refused:           p.Refused,
		AppliesDeployment: p.AppliesDeployment,
		Before:            p.Before,
		After:             append(append([]plan.Object(nil), p.After...), p.Gateway...),
		Delete:            append(append([]plan.Deletion(nil), p.Delete...), p.GatewayDelete...),
		SpecLabels:        map[string]string{},
		SpecAnnotations:   isvc.Spec.PodAnnotations,
	}
	for k, v := range isvc.Spec.PodLabels {
		s.SpecLabels[k] = string(v)
	}
	if p.HasDeployment() {
		s.Deployment, err = p.Deployment(nil, op.FieldManager)
		if obs.Deployment != nil && err == nil {
			s.Deployment, err = p.MigrationTarget(obs.Deployment)
		}
		if err != nil {
			return nil, err
		}
		s.Apply = func(live *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
			return p.Deployment(live, op.FieldManager)
		}
	}
	return s, nil
}

// ForModelRouter reads what the plan of router depends on through c, and plans it.
func ForModelRouter(ctx context.Context, c client.Reader, router *inferencev1alpha1.ModelRouter, op Operator) (*Set, error) {
	obs, err := modelrouter.Observe(ctx, c, router)
	if err != nil {
		return nil, err
	}
	p, err := modelrouter.PlanFor(obs, modelrouter.Flags{EmitScrapeAnnotations: op.EmitScrapeAnnotations, Image: op.RouterProxyImage})
	if err != nil {
		return nil, err
	}
	if p.Refused != nil {
		// Nothing of a refused router's plan is applied.
		return &Set{Owner: "mr/" + router.Name, Blocked: status.ReasonNotControlled, BlockedMessage: p.Refused.Error(), Refused: p.Refused}, nil
	}
	s := &Set{
		Owner:      "mr/" + router.Name,
		Deployment: p.Deployment(),
		Apply: func(*appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
			return p.Deployment(), nil
		},
		Before:          append(append([]plan.Object(nil), p.Access...), p.ConfigMap),
		After:           []plan.Object{p.Service},
		SpecLabels:      map[string]string{},
		SpecAnnotations: map[string]string{},
	}
	for _, r := range p.Resolutions {
		if !r.Resolved {
			s.Unresolved = append(s.Unresolved, fmt.Sprintf("backend %s: %s", r.Backend.Name, r.Message))
		}
	}
	if proxy := router.Spec.Proxy; proxy != nil {
		for k, v := range proxy.PodLabels {
			s.SpecLabels[k] = string(v)
		}
		s.SpecAnnotations = proxy.PodAnnotations
	}
	return s, nil
}

// Notes are what the user must know beside the objects: why the plan has no Deployment, which
// backends a router routes nothing to. One line each, for a table's comment lines.
func (s *Set) Notes() []string {
	var out []string
	if s.Blocked != "" {
		out = append(out, s.BlockedMessage)
	}
	for _, u := range s.Unresolved {
		out = append(out, u+": the router routes nothing to it until it exists")
	}
	return out
}

// Others are the objects other than the Deployment, in apply order.
func (s *Set) Others() []runtime.ApplyConfiguration {
	var out []runtime.ApplyConfiguration
	for _, o := range append(append([]plan.Object(nil), s.Before...), s.After...) {
		out = append(out, o.Desired)
	}
	return out
}

// InOrder is every object of the set in the order the reconciler applies them, with deployment
// (nil when the plan has none) as the Deployment.
func (s *Set) InOrder(deployment *appsv1ac.DeploymentApplyConfiguration) []plan.Object {
	return append(append([]plan.Object(nil), s.Before...), s.FromDeployment(deployment)...)
}

// FromDeployment is deployment (nil: none) and the objects applied after it, in order.
func (s *Set) FromDeployment(deployment *appsv1ac.DeploymentApplyConfiguration) []plan.Object {
	var out []plan.Object
	if deployment != nil {
		out = append(out, plan.Of(deployment, func() *appsv1.Deployment { return &appsv1.Deployment{} }, appsv1ac.ExtractDeployment))
	}
	return append(out, s.After...)
}
