/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package v1alpha1 holds the inference.llmkube.dev/v1alpha1 API: InferenceService, Model and ModelRouter.
// Types and markers only; everything named zz_generated.* and the applyconfig/ package are generated.
//
// +kubebuilder:object:generate=true
// +kubebuilder:ac:generate=true
// +kubebuilder:ac:output:package=../../applyconfig
// +groupName=inference.llmkube.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "inference.llmkube.dev", Version: "v1alpha1"}

	// SchemeGroupVersion is GroupVersion under the name generated code expects.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
