/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package desired computes what the operator would apply for an InferenceService or a
// ModelRouter as the cluster is now, with the reconcilers' own builders and inputs.
package desired

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// Options are the operator's flags that shape what it applies.
type Options struct {
	FieldManager          string
	EmitScrapeAnnotations bool
}

// Set is what the operator applies for one InferenceService or ModelRouter.
type Set struct {
	// Owner is isvc/NAME or mr/NAME.
	Owner string
	// Deployment is what the reconciler hands the migration of the live Deployment (what it
	// applies when there is none).
	Deployment *appsv1ac.DeploymentApplyConfiguration
	// Apply is the Deployment the reconciler applies when live (nil: absent) is the Deployment
	// then, e.g. right after the migration.
	Apply func(live *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error)
	// Others are the other objects it applies (Service, HPA, ConfigMap), in apply order.
	Others []runtime.ApplyConfiguration
	// deploymentAt is where the Deployment comes among Others in the reconciler's order.
	deploymentAt int
	// SpecLabels and SpecAnnotations are the spec's pod labels and annotations.
	SpecLabels, SpecAnnotations map[string]string
}

// ForInferenceService is what the reconciler applies for isvc when live is its Deployment.
func ForInferenceService(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, o Options) (*Set, error) {
	in, err := inferenceservice.PreviewInputs(isvc, live, o.FieldManager, o.EmitScrapeAnnotations)
	if err != nil {
		return nil, fmt.Errorf("Deployment %s: %w", isvc.Name, err)
	}
	d, err := inferenceservice.Deployment(isvc, in)
	if live != nil {
		d, err = inferenceservice.PreviewMigrationTarget(isvc, in, live)
	}
	if err != nil {
		return nil, fmt.Errorf("Deployment %s: %w", isvc.Name, err)
	}
	s := &Set{
		Owner:      "isvc/" + isvc.Name,
		Deployment: d,
		Apply: func(migrated *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
			fresh, err := inferenceservice.Deployment(isvc, in)
			if err != nil {
				return nil, err
			}
			return inferenceservice.PreviewApply(isvc, in, fresh, migrated, o.FieldManager)
		},
		Others:          []runtime.ApplyConfiguration{inferenceservice.Service(isvc)},
		SpecLabels:      map[string]string{},
		SpecAnnotations: isvc.Spec.PodAnnotations,
	}
	for k, v := range isvc.Spec.PodLabels {
		s.SpecLabels[k] = string(v)
	}
	hpa, err := inferenceservice.HPA(isvc)
	if err != nil {
		return nil, fmt.Errorf("HorizontalPodAutoscaler %s: %w", isvc.Name, err)
	}
	if hpa != nil {
		s.Others = append(s.Others, hpa)
	}
	return s, nil
}

// ForModelRouter is what the reconciler applies for router; it reads the router's references
// through c.
func ForModelRouter(ctx context.Context, c client.Client, router *inferencev1alpha1.ModelRouter, o Options) (*Set, error) {
	p, err := modelrouter.PreviewDesired(ctx, c, router, o.EmitScrapeAnnotations)
	if err != nil {
		return nil, err
	}
	s := &Set{
		Owner:      "mr/" + router.Name,
		Deployment: p.Deployment,
		// The router's Deployment depends on nothing live; a fresh one per call, because an apply
		// decodes the server's answer into the configuration it sent.
		Apply: func(*appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
			again, err := modelrouter.PreviewDesired(ctx, c, router, o.EmitScrapeAnnotations)
			if err != nil {
				return nil, err
			}
			return again.Deployment, nil
		},
		Others:          []runtime.ApplyConfiguration{p.ConfigMap, p.Service},
		deploymentAt:    1, // after the ConfigMap, whose hash it carries
		SpecLabels:      map[string]string{},
		SpecAnnotations: map[string]string{},
	}
	if proxy := router.Spec.Proxy; proxy != nil {
		for k, v := range proxy.PodLabels {
			s.SpecLabels[k] = string(v)
		}
		s.SpecAnnotations = proxy.PodAnnotations
	}
	return s, nil
}

// InOrder is every object of the set in the order the reconciler applies them, with deployment as
// the Deployment.
func (s *Set) InOrder(deployment runtime.ApplyConfiguration) []runtime.ApplyConfiguration {
	out := make([]runtime.ApplyConfiguration, 0, len(s.Others)+1)
	out = append(out, s.Others[:s.deploymentAt]...)
	out = append(out, deployment)
	return append(out, s.Others[s.deploymentAt:]...)
}
