/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"context"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// This file lets tools that explain the operator (kubectl llmkube) compute what the reconciler
// would apply for a router, with the reconciler's own lookup and builders.

// Preview is what the reconciler applies for one router.
type Preview struct {
	ConfigMap  *corev1ac.ConfigMapApplyConfiguration
	Deployment *appsv1ac.DeploymentApplyConfiguration
	Service    *corev1ac.ServiceApplyConfiguration
}

// PreviewDesired reads the router's references through c, as the reconciler does from its cache,
// and builds the objects it would apply.
func PreviewDesired(ctx context.Context, c client.Client, router *inferencev1alpha1.ModelRouter, emitScrapeAnnotations bool) (*Preview, error) {
	found, err := (&Reconciler{Client: c}).lookup(ctx, router)
	if err != nil {
		return nil, err
	}
	res := Resolve(router, found)
	data, err := ConfigData(router, res)
	if err != nil {
		return nil, err
	}
	in := Inputs{EmitScrapeAnnotations: emitScrapeAnnotations, Resolutions: res}
	return &Preview{ConfigMap: ConfigMap(router, data), Deployment: Deployment(router, in), Service: Service(router)}, nil
}
