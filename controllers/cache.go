/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// Values of the operator's --cache-transform.
const (
	// CacheTransformSafe drops from the informer cache what no reconciler reads: the
	// kubectl.kubernetes.io/last-applied-configuration annotation of every object (a second copy
	// of the manifest when objects are applied client-side), and the managedFields of objects
	// cached as metadata only (Secrets), which nothing extracts from.
	//
	// Note: managedFields of the kinds the operator applies (InferenceService, ModelRouter,
	// Deployment, Service, HorizontalPodAutoscaler, ConfigMap) stay: the owned-equals-desired
	// check extracts from them, and without them every reconcile would write.
	CacheTransformSafe = "safe"
	// CacheTransformNone caches objects exactly as the API server sends them.
	CacheTransformNone = "none"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// CacheOptions are the manager's cache options: the namespaces to watch (all when empty) and
// the transform.
func CacheOptions(transform string, namespaces []string) (cache.Options, error) {
	opts := cache.Options{}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	switch transform {
	case CacheTransformNone:
	case CacheTransformSafe, "":
		opts.DefaultTransform = stripUnread
	default:
		return opts, fmt.Errorf("unknown cache transform %q (want %s or %s)", transform, CacheTransformSafe, CacheTransformNone)
	}
	return opts, nil
}

// stripUnread is the safe transform. It changes the object it is given, as the informer owns it.
func stripUnread(in any) (any, error) {
	obj, ok := in.(metav1.Object)
	if !ok {
		return in, nil
	}
	if a := obj.GetAnnotations(); a != nil {
		if _, ok := a[lastApplied]; ok {
			delete(a, lastApplied)
			obj.SetAnnotations(a)
		}
	}
	if _, ok := in.(*metav1.PartialObjectMetadata); ok {
		obj.SetManagedFields(nil)
	}
	return in, nil
}
