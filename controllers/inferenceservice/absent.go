/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"context"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

// absences remembers, per InferenceService generation, which objects the API server said do not
// exist, so that a reconcile that writes none of them (a plan blocked by a missing Model, a
// Deployment held back by a refused claim) reads the API server once per change, not on every
// reconcile or backoff retry.
//
// Note: the caches hold only the operator's labelled objects, so a cache miss is read past
// (ownership.Applier.Through); an object the operator itself creates is labelled and shows up in
// the cache, so a remembered absence goes stale only by someone else's object of that name, which
// matters only when the operator is about to create one: that create reads the API server again
// (fresh).
type absences struct{ m sync.Map }

type absentKey struct {
	owner types.UID
	kind  reflect.Type
	key   client.ObjectKey
}

// reader reads through cache and, on a miss of a kind whose cache holds only labelled objects,
// through live (the API server), unless that miss was already read there at isvc's generation.
func (a *absences) reader(cache, live client.Reader, isvc *inferencev1alpha1.InferenceService) *absentReader {
	return &absentReader{Reader: cache, live: live, a: a, owner: isvc.UID, generation: isvc.Generation}
}

type absentReader struct {
	client.Reader
	live       client.Reader
	a          *absences
	owner      types.UID
	generation int64
	// remembered are the objects whose absence came from memory in this reconcile.
	remembered map[absentKey]bool
}

func (r *absentReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.Reader.Get(ctx, key, obj, opts...)
	if r.live == nil || !labelledKind(obj) {
		return err
	}
	k := absentKey{owner: r.owner, kind: reflect.TypeOf(obj), key: key}
	if !apierrors.IsNotFound(err) {
		r.a.m.Delete(k)
		return err
	}
	if g, ok := r.a.m.Load(k); ok && g.(int64) == r.generation {
		if r.remembered == nil {
			r.remembered = map[absentKey]bool{}
		}
		r.remembered[k] = true
		return err
	}
	err = r.live.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) {
		r.a.m.Store(k, r.generation)
	} else {
		r.a.m.Delete(k)
	}
	return err
}

// labelledKind says whether obj's cache holds only the operator's labelled objects, so that a
// miss is not "absent".
func labelledKind(obj client.Object) bool {
	t := reflect.TypeOf(obj)
	for _, k := range ownership.LabelledKinds() {
		if reflect.TypeOf(k) == t {
			return true
		}
	}
	return false
}

// fromMemory says whether the absence of the object of obj's type named key was remembered, not
// read, in this reconcile: a create must read again first.
func (r *absentReader) fromMemory(obj client.Object, key client.ObjectKey) bool {
	return r.remembered[absentKey{owner: r.owner, kind: reflect.TypeOf(obj), key: key}]
}
