/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteControlled deletes the object named key when owner controls it, read through r into obj
// (an empty object of its kind), with a UID precondition. An object that is absent, someone
// else's or already being deleted (a claim a pod still mounts waits for it) is left alone. A
// deletion the operator owes is decided on what is: r is the API server where a cache may lag.
func DeleteControlled(ctx context.Context, c client.Writer, r client.Reader, owner metav1.Object, key client.ObjectKey, obj client.Object) error {
	if err := r.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, owner) || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	uid := obj.GetUID()
	return client.IgnoreNotFound(c.Delete(ctx, obj, client.Preconditions{UID: &uid}))
}

// DeleteControlled is DeleteControlled for o's live object, read through r (the API server).
func (o Object) DeleteControlled(ctx context.Context, c client.Writer, r client.Reader, owner metav1.Object) error {
	if o.newLive == nil {
		return fmt.Errorf("%s %s: the plan does not say how to read it", o.Kind, o.Key)
	}
	if err := DeleteControlled(ctx, c, r, owner, o.Key, o.newLive()); err != nil {
		return fmt.Errorf("deleting %s %s: %w", o.Kind, o.Key, err)
	}
	return nil
}
