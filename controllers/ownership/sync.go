/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ApplyChange is ApplyIfChanged for a reconciler: a rejection names the object's kind, and a write
// is logged.
func (a Applier) ApplyChange(ctx context.Context, c Change) error {
	kind := kindOf(c.Desired)
	sent, err := a.ApplyIfChanged(ctx, c)
	if err != nil {
		return fmt.Errorf("%s apply rejected by the API server: %w", kind, err)
	}
	if sent {
		log.FromContext(ctx).V(1).Info("applied", "kind", kind)
	}
	return nil
}

// Sync reads the object named key into live (from the cache), extracts what the field manager owns
// of it with extract (e.g. corev1ac.ExtractService), and applies desired unless that already holds
// it. owner receives the Events.
func Sync[T client.Object, AC any](ctx context.Context, a Applier, reader client.Reader, owner client.Object, key client.ObjectKey,
	live T, extract func(T, string) (AC, error), desired runtime.ApplyConfiguration) error {
	c := Change{Owner: owner, Desired: desired}
	switch err := reader.Get(ctx, key, live); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		owned, err := extract(live, a.FieldManager)
		if err != nil {
			return err
		}
		c.Live, c.Owned = live, owned
	}
	return a.ApplyChange(ctx, c)
}

// Permanent says whether every error is a rejection by validation (or size), which retrying the
// same spec cannot heal; anything else (a conflict, an unavailable API server) might.
func Permanent(errs []error) bool {
	for _, err := range errs {
		if !apierrors.IsInvalid(err) && !apierrors.IsRequestEntityTooLargeError(err) && !apierrors.IsBadRequest(err) {
			return false
		}
	}
	return true
}
