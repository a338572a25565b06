/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// AddToScheme registers every kind the operator reads or writes: the built-in kinds, ours, and
// the Gateway API's HTTPRoute and InferencePool.
//
// Note: registering a kind needs no CRD; the operator looks for the Gateway API CRDs only when
// an InferenceService asks for a gateway (see inferenceservice.OptionalKinds).
func AddToScheme(s *runtime.Scheme) error {
	builder := runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, inferencev1alpha1.AddToScheme, gatewayv1.Install, inferencepoolv1.Install)
	return builder.AddToScheme(s)
}
