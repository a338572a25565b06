/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

// This file is the create half of "create, or update the object I control". An apply to a name
// that does not exist creates the object, and one to a name that exists updates it: an apply sent
// after a read that found nothing would adopt whatever someone created in between (set the
// controller reference, replace the fields the operator applies). The UID pin cannot ask for
// absence (an apply carrying a UID to a missing name is refused). A resourceVersion can: the API
// server ignores it when an apply creates, and refuses with a conflict one that differs from the
// live object's when the name exists. No object is ever at resourceVersion "1" (etcd's first write
// is revision 2), so an apply carrying it creates or fails, in one request, and leaves exactly the
// Apply entry an apply leaves. Measured on the API server in test/envtest/create_pin_test.go.
//
// Objects created by earlier versions of this operator (a POST, then a write that handed the
// POST's Update entry to the Apply entry) may still carry that Update entry when the process
// stopped between the two: handOver finishes them.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// notApplied are the fields the API server never records in a managedFields entry: the identity
// fields it strips from every entry (the migration's neverOwned adds the record annotations).
var notApplied = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
)

// mustNotExist is the resourceVersion no stored object has: an apply carrying it creates, or
// fails with a conflict when the name is taken.
const mustNotExist = "1"

// create creates the object desired describes, failing with AlreadyExists when one of its name
// exists (someone's object, or the operator's own that the cache has not shown yet): one apply
// pinned to mustNotExist. The API server's answer is decoded into desired, as an apply's is.
func (a Applier) create(ctx context.Context, desired runtime.ApplyConfiguration) error {
	m := objectMeta(desired)
	if m == nil {
		return fmt.Errorf("%s %s: the apply configuration has no metadata to pin its create with", kindOf(desired), KeyOf(desired))
	}
	m.ResourceVersion = ptr.To(mustNotExist)
	err := a.Apply(ctx, desired)
	if err == nil {
		return nil
	}
	// Not sent after all: the apply that follows a fresh read carries the live resourceVersion or none.
	m.ResourceVersion = nil
	if apierrors.IsConflict(err) {
		key := KeyOf(desired)
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: kindOf(desired)}, key.Name)
	}
	return err
}

// handOver finishes a create whose second write never happened (the process stopped between the
// two): the field manager's Update entry on live becomes part of its Apply entry, so that an
// apply can remove what the create set. live then holds the API server's answer.
//
// Note: the Update entry also owns the fields the API server defaulted; owned by the Apply entry,
// the next apply, which does not set them, prunes them and the API server defaults them again, to
// the same values: the object, and its pods, do not change.
func (a Applier) handOver(ctx context.Context, live client.Object) error {
	var entries []metav1.ManagedFieldsEntry
	var update *metav1.ManagedFieldsEntry
	apply := -1
	for _, e := range live.GetManagedFields() {
		switch {
		case e.Manager != a.FieldManager || e.Subresource != "":
		case e.Operation == metav1.ManagedFieldsOperationUpdate:
			update = &e
			continue
		case e.Operation == metav1.ManagedFieldsOperationApply:
			apply = len(entries)
		}
		entries = append(entries, e)
	}
	if update == nil {
		return nil
	}
	set, err := EntrySet(*update)
	if err != nil {
		return err
	}
	merged := *update
	merged.Operation = metav1.ManagedFieldsOperationApply
	merged.Time = &metav1.Time{Time: time.Now().UTC().Truncate(time.Second)}
	if apply >= 0 {
		owned, err := EntrySet(entries[apply])
		if err != nil {
			return err
		}
		set = set.Union(owned)
		merged.APIVersion = entries[apply].APIVersion
	}
	raw, err := set.ToJSON()
	if err != nil {
		return err
	}
	merged.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	if apply >= 0 {
		entries[apply] = merged
	} else {
		entries = append(entries, merged)
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": live.GetUID()},
		{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()},
		{"op": "replace", "path": "/metadata/managedFields", "value": entries},
	})
	if err != nil {
		return err
	}
	if err := a.Client.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(a.FieldManager)); err != nil {
		return fmt.Errorf("handing the fields of its create to the apply entry: %w", err)
	}
	return nil
}
