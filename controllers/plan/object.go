/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package plan is the shape every kind's plan shares: the objects one owner applies, each with
// how to read what the operator's field manager owns of its live copy, so that the reconciler (which
// sends them) and kubectl llmkube (which shows them) take the same "would this write?" decision
// from the same data. The plans themselves are pure functions in the kinds' packages
// (inferenceservice.PlanFor, modelrouter.PlanFor); this package knows no kind of ours.
package plan

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
)

// Object is one object a plan applies.
type Object struct {
	// Desired is the apply configuration the operator sends.
	Desired runtime.ApplyConfiguration
	// Kind and Key name the object.
	Kind string
	Key  client.ObjectKey

	needs   []Ref
	newLive func() client.Object
	extract func(client.Object, string) (any, error)
	sync    func(ctx context.Context, a ownership.Applier, r client.Reader, owner client.Object) error
}

// Of is the object desired, typed by its live Go type T (newLive makes an empty one) and the
// extraction of what a field manager owns of it (e.g. corev1ac.ExtractService).
func Of[T client.Object, AC any](desired runtime.ApplyConfiguration, newLive func() T, extract func(T, string) (AC, error)) Object {
	// As the operator's apply does (ownership.Applier.Apply), so that what a preview shows and
	// compares is what the apply sends.
	ownership.MarkManaged(desired)
	key := ownership.KeyOf(desired)
	return Object{
		Desired: desired, Kind: kindOf(desired), Key: key,
		newLive: func() client.Object { return newLive() },
		extract: func(o client.Object, manager string) (any, error) { return extract(o.(T), manager) },
		sync: func(ctx context.Context, a ownership.Applier, r client.Reader, owner client.Object) error {
			return ownership.Sync(ctx, a, r, owner, key, newLive(), extract, desired)
		},
	}
}

// Named is an object the plan names without an apply configuration here (the kind sends it
// itself, through a Step's Send, or the plan refused it): Run's identity for it, and what
// DeleteControlled reads (newLive makes an empty one of its kind, named kind).
func Named[T client.Object](kind string, key client.ObjectKey, newLive func() T) Object {
	return Object{Kind: kind, Key: key, newLive: func() client.Object { return newLive() }}
}

// kindOf reads an apply configuration's kind through its getter.
func kindOf(ac any) string {
	if k, ok := ac.(interface{ GetKind() *string }); ok && k.GetKind() != nil {
		return *k.GetKind()
	}
	return ""
}

// Sync is the object's whole write through ownership.Sync: read, migrate legacy ownership,
// extract, apply unless the field manager already owns exactly Desired.
func (o Object) Sync(ctx context.Context, a ownership.Applier, r client.Reader, owner client.Object) error {
	return o.sync(ctx, a, r, owner)
}

// Live reads the object through r; nil when it does not exist.
func (o Object) Live(ctx context.Context, r client.Reader) (client.Object, error) {
	if o.newLive == nil {
		return nil, fmt.Errorf("%s %s: the plan does not say how to read it", o.Kind, o.Key)
	}
	live := o.newLive()
	switch err := r.Get(ctx, o.Key, live); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return live, nil
}

// WouldApply says whether the operator sends Desired when live (nil: absent) is the object: the
// reconciler's own test (ownership.OwnedEqualsDesired on what manager owns).
//
// Note: a forced dry-run apply answers with the object as such an apply would leave it, and that
// answer can differ from live even when the operator sends nothing (a list another writer
// reordered, say); a preview that skips this test reports a change the operator never makes.
func (o Object) WouldApply(live client.Object, manager string) (bool, error) {
	if live == nil {
		return true, nil
	}
	owned, err := o.extract(live, manager)
	if err != nil {
		return false, err
	}
	same, err := ownership.OwnedEqualsDesired(owned, o.Desired)
	return !same, err
}

// GVK is the object's group, version and kind, as Desired names them.
func (o Object) GVK() schema.GroupVersionKind {
	av := ""
	if v, ok := o.Desired.(interface{ GetAPIVersion() *string }); ok && v.GetAPIVersion() != nil {
		av = *v.GetAPIVersion()
	}
	return schema.FromAPIVersionAndKind(av, o.Kind)
}

// Deletion is an object a plan deletes when its owner controls it: named like the owner, of kind
// GVK. Whether it exists and whom it belongs to is decided by a live read when the delete is sent.
type Deletion struct {
	GVK schema.GroupVersionKind
	Key client.ObjectKey
}
