/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"fmt"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ForeignNames knows the names of the objects, of the kinds a plan reads past the operator's
// caches (Deployments and PersistentVolumeClaims: an InferenceService's workload and its Model's
// cache claim), that do not carry the operator's label: a metadata-only cache selected by
// LabelManagedBy != ManagedBy, the complement of the operator's own caches (controllers.CacheOptions).
// A name neither cache holds is absent, and a plan reads it past the caches only when this cache
// holds it: a user's object, which is refused, or one the legacy operator wrote, which is migrated.
//
// Note: without it, every new InferenceService cost a GET of its Deployment and one of its claim,
// both answered 404 (2 of 7.97 requests per Model and InferenceService pair in `make bench-peer`).
// It keeps name, namespace and UID only (about 300 bytes an object, not the 1-12 KB of a cached
// Deployment). A lagging cache can miss an object created a moment ago: the create pinned to
// resourceVersion 1 (create.go) is then refused, and the object is read and decided as anyone's.
type ForeignNames struct {
	cache  cache.Cache
	scheme *runtime.Scheme
	kinds  map[schema.GroupVersionKind]bool // of foreignKinds, resolved once: Absent is on every plan's read
	synced atomic.Bool
}

// foreignKinds are the kinds ForeignNames holds.
func foreignKinds() []client.Object {
	return []client.Object{&appsv1.Deployment{}, &corev1.PersistentVolumeClaim{}}
}

// NewForeignNames builds the cache for namespaces (all when empty); it holds nothing until the
// manager starts it (it is a manager.Runnable).
func NewForeignNames(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, namespaces []string) (*ForeignNames, error) {
	notOurs, err := labels.NewRequirement(LabelManagedBy, selection.NotEquals, []string{ManagedBy})
	if err != nil {
		return nil, err
	}
	opts := cache.Options{Scheme: scheme, Mapper: mapper, ReaderFailOnMissingInformer: true,
		DefaultLabelSelector: labels.NewSelector().Add(*notOurs), DefaultTransform: nameOnly}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	kinds := map[schema.GroupVersionKind]bool{}
	for _, obj := range foreignKinds() {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return nil, err
		}
		kinds[gvk] = true
	}
	return &ForeignNames{cache: c, scheme: scheme, kinds: kinds}, nil
}

// nameOnly keeps what a name lookup needs of an object's metadata.
func nameOnly(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}}, nil
}

// Start runs the cache until ctx ends; Absent answers from it once every kind has synced.
func (f *ForeignNames) Start(ctx context.Context) error {
	for _, obj := range foreignKinds() {
		pom, err := f.metadataOf(obj)
		if err != nil {
			return err
		}
		if _, err := f.cache.GetInformer(ctx, pom, cache.BlockUntilSynced(false)); err != nil {
			return err
		}
	}
	go func() {
		if f.cache.WaitForCacheSync(ctx) {
			f.synced.Store(true)
		}
	}()
	return f.cache.Start(ctx)
}

// NeedLeaderElection is false: a standby replica's plans read through it too (kubectl llmkube
// does not: it reads the API server).
func (f *ForeignNames) NeedLeaderElection() bool { return false }

// Absent says whether no object of obj's kind named key exists that the operator's caches leave
// out. False when it cannot say: a nil ForeignNames, a kind it does not hold, a cache not synced.
func (f *ForeignNames) Absent(ctx context.Context, obj client.Object, key client.ObjectKey) bool {
	if f == nil || !f.synced.Load() {
		return false
	}
	pom, err := f.metadataOf(obj)
	if err != nil {
		return false
	}
	return apierrors.IsNotFound(f.cache.Get(ctx, key, pom))
}

// metadataOf is the metadata-only object of obj's kind, when ForeignNames holds that kind.
func (f *ForeignNames) metadataOf(obj client.Object) (*metav1.PartialObjectMetadata, error) {
	gvk, err := apiutil.GVKForObject(obj, f.scheme)
	if err != nil {
		return nil, err
	}
	if f.kinds[gvk] {
		pom := &metav1.PartialObjectMetadata{}
		pom.SetGroupVersionKind(gvk)
		return pom, nil
	}
	return nil, fmt.Errorf("%s is not held by the foreign-names cache", gvk)
}
