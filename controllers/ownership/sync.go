/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ApplyChange is ApplyIfChanged for a reconciler: a failure names the object's kind and
// namespace/name, and a write is logged.
func (a Applier) ApplyChange(ctx context.Context, c Change) error {
	kind := kindOf(c.Desired)
	sent, err := a.ApplyIfChanged(ctx, c)
	if err != nil {
		return Fail(kind, KeyOf(c.Desired), StepApply, err)
	}
	if sent {
		log.FromContext(ctx).V(1).Info("applied", "kind", kind, "object", KeyOf(c.Desired))
	}
	return nil
}

// Sync is one object's whole write: it reads the object named key into live (from the cache, and
// from the API server when the cache misses), refuses it when desired's controller does not
// control it (NotControlled: never adopted, never migrated), migrates legacy ownership when the object needs it (the same code for every kind), extracts
// what the field manager owns of it with extract (e.g. corev1ac.ExtractService), and applies
// desired unless that already holds it. owner receives the Events. A failure names its step and
// the object. After an apply, live holds the API server's answer.
func Sync[T client.Object, AC any](ctx context.Context, a Applier, reader client.Reader, owner client.Object, key client.ObjectKey,
	live T, extract func(T, string) (AC, error), desired runtime.ApplyConfiguration) error {
	kind := kindOf(desired)
	c := Change{Owner: owner, Desired: desired}
	switch found, err := a.Get(ctx, reader, key, live); {
	case err != nil:
		return Fail(kind, key, StepRead, err)
	case found:
		if err := CheckControlled(live, desired); err != nil {
			return Fail(kind, key, StepOwnership, err)
		}
		if live, err = MigrateIfNeeded(ctx, a.Migrator, owner, KindOfObject(owner), live, desired); err != nil {
			return err
		}
		owned, err := extract(live, a.FieldManager)
		if err != nil {
			return Fail(kind, key, StepExtract, err)
		}
		c.Live, c.Owned = live, owned
	}
	if err := a.ApplyChange(ctx, c); err != nil {
		return err
	}
	answered(desired, live)
	return nil
}

// answered puts the API server's answer to the apply of desired into live, so that the caller
// computes status from the object as written, not as read before the write (the watch event of
// the operator's own write is filtered, so nothing would compute it again). Nothing sent, live
// stays as read.
func answered[T client.Object](desired runtime.ApplyConfiguration, live T) {
	fresh := reflect.New(reflect.TypeOf(live).Elem()).Interface().(T)
	if applied, ok := Answer(desired, fresh); ok {
		reflect.ValueOf(live).Elem().Set(reflect.ValueOf(applied).Elem())
	}
}

// KindOfObject is the kind of a typed object, from its Go type (a typed object read by the client
// often has an empty TypeMeta).
func KindOfObject(obj runtime.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return reflect.TypeOf(obj).Elem().Name()
}

// KeyOf is the namespace/name an apply configuration names, read through its getters (no JSON
// round trip).
func KeyOf(ac any) client.ObjectKey {
	var key client.ObjectKey
	if n, ok := ac.(interface{ GetName() *string }); ok && n.GetName() != nil {
		key.Name = *n.GetName()
	}
	if n, ok := ac.(interface{ GetNamespace() *string }); ok && n.GetNamespace() != nil {
		key.Namespace = *n.GetNamespace()
	}
	return key
}
