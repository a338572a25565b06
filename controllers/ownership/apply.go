/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package ownership is server-side-apply ownership and nothing else: apply with one field manager
// and forced ownership (apply.go, sync.go), the check that skips the write when what the manager
// owns already equals what it wants (owned.go, with what it must normalise in normalize.go),
// reading managedFields with one decoder (managedfields.go), the report of fields another manager
// took (conflicts.go), what failed where (failure.go), and the one-time migration of legacy
// ownership (migrate*.go). Status conditions and Events of the API types live in
// controllers/status.
package ownership

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/managedfields"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultFieldManager is the field manager the operator applies with unless told otherwise.
const DefaultFieldManager = "llmkube-operator"

// Applier sends apply configurations with one field manager.
type Applier struct {
	Client       client.Client
	FieldManager string
	// Recorder, when set, gets a Warning Event (ReasonOwnershipConflict) on the owner whenever a
	// forced apply takes back a field another manager changed. Nil records nothing.
	Recorder events.EventRecorder
	// Written, when set, remembers the resourceVersion of every apply, so that the watch event of
	// the operator's own write does not reconcile the owner again, and a conflict is reported once
	// even when a lagging cache shows it again (see OwnWrites).
	Written *OwnWrites
	// Migrator hands the legacy operator's ownership of an object to FieldManager before the apply
	// to it (Sync runs it for every kind); the zero value migrates nothing.
	Migrator Migrator
	// Types types the objects the operator applies, for naming the fields another manager took
	// (NewTypeConverter); the built-in kinds and ours when nil. Built once: it is asked on every
	// apply that changes an existing object.
	Types managedfields.TypeConverter
	// Reader reads past the cache (the manager's API reader): Get asks it when the cache misses,
	// since the caches hold only the operator's labelled objects. Nil reads the cache only.
	Reader client.Reader
	// Foreign, when set, knows the names the caches leave out (ForeignNames): Past answers a name
	// it knows to be free without asking Reader.
	Foreign *ForeignNames
}

// Uncached is the API server's reader (Reader), or cached when the applier has none (a test that
// drives a reconciler without the manager): for a decision that must not rest on a lagging cache.
func (a Applier) Uncached(cached client.Reader) client.Reader {
	if a.Reader != nil {
		return a.Reader
	}
	return cached
}

// Apply sends ac as a forced server-side apply under the applier's field manager.
//
// Note: controller-runtime decodes the server's answer into ac, so ac then holds every field of
// the live object; callers build a fresh configuration for every apply and never resend one.
func (a Applier) Apply(ctx context.Context, ac runtime.ApplyConfiguration) error {
	MarkManaged(ac)
	if err := a.Client.Apply(ctx, ac, client.FieldOwner(a.FieldManager), client.ForceOwnership); err != nil {
		return err
	}
	a.Written.Record(ac)
	return nil
}

// ApplyStatus sends ac to the status subresource, under the same field manager.
func (a Applier) ApplyStatus(ctx context.Context, ac runtime.ApplyConfiguration) error {
	return a.Client.Status().Apply(ctx, ac, client.FieldOwner(a.FieldManager), client.ForceOwnership)
}

// Change is one object the operator wants, beside what it already owns of the live object.
type Change struct {
	// Owner is the InferenceService or ModelRouter the object belongs to; Events go to it.
	Owner runtime.Object
	// Live is the object as read, nil when it does not exist yet.
	Live client.Object
	// Owned is what the field manager owns of Live (an extracted apply configuration), nil when
	// Live is nil.
	Owned any
	// Desired is what the operator wants to apply now.
	Desired runtime.ApplyConfiguration
}

// ApplyIfChanged applies c.Desired unless c.Owned, the fields the manager already owns, holds
// exactly that. It reports whether it sent a write.
//
// Note: a no-op apply does not change the object, but it is still a request; skipping it is what
// keeps a steady-state reconcile at zero writes.
//
// An existing object (c.Live) is written only when c.Desired's controller owns it (same UID); any
// other is refused with NotControlled and left untouched. The apply then carries c.Live's UID, so
// it updates that very object or fails: it never creates or adopts another one of the same name.
// An absent one (c.Live nil) is created by a create that fails when the name is taken by then
// (see create.go), never by an apply, which would adopt it.
func (a Applier) ApplyIfChanged(ctx context.Context, c Change) (bool, error) {
	if c.Live != nil {
		if err := CheckControlled(c.Live, c.Desired); err != nil {
			return false, Fail(kindOf(c.Desired), client.ObjectKeyFromObject(c.Live), StepOwnership, err)
		}
		if err := a.handOver(ctx, c.Live); err != nil {
			return true, err
		}
	}
	MarkManaged(c.Desired)
	if same, err := alreadyOwned(c.Owned, c.Desired); err != nil || same {
		return false, err
	}
	if c.Live == nil {
		// Create, never adopt: someone's object created since the read fails the create.
		if err := a.create(ctx, c.Desired); err != nil {
			return true, err
		}
		a.Written.Record(c.Desired)
		return true, nil
	}
	pinUID(c.Desired, c.Live.GetUID())
	digest, err := digestOf(c.Desired)
	if err != nil {
		return false, err
	}
	// A reconcile that reads the object as it was before this process's last apply (the cache
	// lags behind the answer) sees what that apply already took back and reported: the same
	// apply again would be a no-op request, another report a duplicate Event.
	last, answered := a.Written.SentOver(c.Live)
	switch {
	case answered && last == digest:
		return false, nil
	case answered:
		a.reportConflictsPastLag(ctx, c)
	default:
		a.reportConflicts(ctx, c)
	}
	if err := a.Apply(ctx, c.Desired); err != nil {
		return true, err
	}
	a.Written.RecordSentOver(c.Live, digest)
	return true, nil
}

// ApplyIfChangedStatus is ApplyIfChanged for the status subresource; owned comes from the
// status extraction of the live object.
func (a Applier) ApplyIfChangedStatus(ctx context.Context, owned any, desired runtime.ApplyConfiguration) (bool, error) {
	if same, err := alreadyOwned(owned, desired); err != nil || same {
		return false, err
	}
	return true, a.ApplyStatus(ctx, desired)
}

// alreadyOwned says whether owned (nil when the object does not exist) holds desired already.
func alreadyOwned(owned any, desired runtime.ApplyConfiguration) (bool, error) {
	if owned == nil {
		return false, nil
	}
	return OwnedEqualsDesired(owned, desired)
}

// Answer is the object as the API server answered the last apply of ac, decoded into into, or
// false when ac holds no answer (nothing was sent, or the answer had no generation).
//
// Note: controller-runtime decodes the server's answer into the apply configuration; reading it
// lets a reconciler report status from the object as written, not as the cache had it before the
// write (which cost a second status write per object during convergence).
func Answer[T client.Object](ac runtime.ApplyConfiguration, into T) (T, bool) {
	data, err := json.Marshal(ac)
	if err != nil || json.Unmarshal(data, into) != nil || into.GetGeneration() == 0 {
		return into, false
	}
	return into, true
}
