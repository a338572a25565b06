/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package ownership is how the operator writes: server-side apply with one field manager and forced
// ownership, a check that skips the write when what the manager owns already equals what it
// wants, and (in its own file) the one-time migration of legacy ownership.
package ownership

import (
	"context"

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
	// the operator's own write does not reconcile the owner again (see OwnWrites).
	Written *OwnWrites
}

// Apply sends ac as a forced server-side apply under the applier's field manager.
//
// Note: controller-runtime decodes the server's answer into ac, so ac then holds every field of
// the live object; callers build a fresh configuration for every apply and never resend one.
func (a Applier) Apply(ctx context.Context, ac runtime.ApplyConfiguration) error {
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
func (a Applier) ApplyIfChanged(ctx context.Context, c Change) (bool, error) {
	if same, err := alreadyOwned(c.Owned, c.Desired); err != nil || same {
		return false, err
	}
	if c.Live != nil {
		a.reportConflicts(c)
	}
	return true, a.Apply(ctx, c.Desired)
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
