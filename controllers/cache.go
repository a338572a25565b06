/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
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
	opts.ByObject = ownedOnly()
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

// ownedOnly restricts the cache of every kind the operator writes to the objects it labelled as
// its own (ownership.LabelManagedBy), so the cache holds the operator's objects, not the cluster's
// (a cluster's 12k Deployments and 20k ConfigMaps cost 1-12 KB each in an unrestricted cache).
//
// Note: what the cache does not hold, a metadata-only cache of names knows of
// (ownership.ForeignNames, for the Deployments and claims a plan reads), and the operator reads
// such a name from the API server: a user's object of the same name, which is then refused, or an
// object written before the label existed, which the next apply labels. A create is pinned to
// resourceVersion 1 (ownership/create.go), so a name taken a moment ago is refused, never adopted.
// The objects a reconcile reads but does not own (Secrets, metadata only; Models; InferenceServices)
// are not restricted. Nor, yet, are the optional InferencePool and HTTPRoute: a selector for a
// kind makes the cache map it when the manager starts, which fails while its CRD is missing.
func ownedOnly() map[client.Object]cache.ByObject {
	owned := labels.SelectorFromSet(labels.Set{ownership.LabelManagedBy: ownership.ManagedBy})
	out := map[client.Object]cache.ByObject{}
	for _, obj := range ownership.LabelledKinds() {
		out[obj] = cache.ByObject{Label: owned}
	}
	return out
}
