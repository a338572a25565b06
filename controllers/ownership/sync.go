/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Sync is one object's whole write: it reads the object named key into live from reader (the
// cache), refuses it when desired's controller does not control it (NotControlled: never adopted,
// never migrated), migrates legacy ownership when the object needs it (the same code for every
// kind), extracts what the field manager owns of it with extract (e.g. corev1ac.ExtractService),
// and applies desired unless that already holds it. owner receives the Events. A failure names its
// step and the object. After an apply, live holds the API server's answer.
//
// A cache miss is not read again from the API server: the create that follows fails when the
// name is taken (create.go), and only then is the object read past the cache, and decided as
// above. The caches hold only the operator's labelled objects, so that read is what finds a
// user's object or a legacy one; a create costs one request instead of a read that answers 404
// and the create. A name found taken, or just created, is remembered until the cache shows it
// (OwnWrites.RememberTaken), so an object the cache cannot see costs one read per resync, not a
// refused create and a read.
func Sync[T client.Object, AC any](ctx context.Context, a Applier, reader client.Reader, owner client.Object, key client.ObjectKey,
	live T, extract func(T, string) (AC, error), desired runtime.ApplyConfiguration) error {
	kind := kindOf(desired)
	found, err := readFrom(ctx, reader, key, live)
	if err != nil {
		return Fail(kind, key, StepRead, err)
	}
	switch {
	case found:
		a.Written.ForgetTaken(desired, key)
	case a.Written.Taken(desired, key):
		// A name known taken: read it past the cache, where a create would be refused.
		if found, err = readFrom(ctx, a.Uncached(reader), key, live); err != nil {
			return Fail(kind, key, StepRead, err)
		}
		if !found {
			a.Written.ForgetTaken(desired, key)
		}
	}
	if !found {
		err := a.ApplyChange(ctx, Change{Owner: owner, Desired: desired})
		if !apierrors.IsAlreadyExists(err) {
			if err == nil {
				a.Written.RememberTaken(desired, key) // until the cache shows it
				answered(desired, live)
			}
			return err
		}
		a.Written.RememberTaken(desired, key)
		switch found, rerr := readFrom(ctx, a.Uncached(reader), key, live); {
		case rerr != nil:
			return Fail(kind, key, StepRead, rerr)
		case !found:
			return err // taken and gone again: the next reconcile decides on what is there then
		}
	}
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
	if err := a.ApplyChange(ctx, Change{Owner: owner, Desired: desired, Live: live, Owned: owned}); err != nil {
		return err
	}
	answered(desired, live)
	return nil
}

// readFrom reads key into obj from reader alone (no second reader on a miss, unlike Applier.Get); false when it is not there.
func readFrom(ctx context.Context, reader client.Reader, key client.ObjectKey, obj client.Object) (bool, error) {
	switch err := reader.Get(ctx, key, obj); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
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
