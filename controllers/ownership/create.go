/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

// This file is the create half of "create, or update the object I control". An apply to a name
// that does not exist creates the object, and one to a name that exists updates it: an apply sent
// after a read that found nothing adopts whatever someone created in between (sets the
// controller reference, replaces the fields the operator applies). An apply has no precondition
// "must not exist" (its UID pin says "must be this object"; a missing object with a UID in the
// apply is refused, so the pin cannot ask for absence). A create (POST) has exactly that
// precondition: it fails with AlreadyExists. So the operator creates with a POST, and then hands
// the fields the POST gave its field manager's Update entry to its Apply entry, pinned to the
// created object's UID and resourceVersion: the object then looks exactly as an apply would have
// created it, and the next apply can remove a field (an Update entry co-owning every field would
// keep them forever, kubernetes/kubernetes#99003).

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
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

// create creates the object desired describes, failing when one of its name exists, with the
// ownership an apply of desired would have given it. Two requests: the POST and the write of its
// managedFields. The API server's answer is decoded into desired, as an apply's is.
func (a Applier) create(ctx context.Context, desired runtime.ApplyConfiguration) error {
	obj, err := ToUnstructured(desired)
	if err != nil {
		return err
	}
	entry, err := a.applyEntry(obj)
	if err != nil {
		return err
	}
	if err := a.Client.Create(ctx, obj, client.FieldOwner(a.FieldManager)); err != nil {
		return err
	}
	var entries []metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.Manager == a.FieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			continue
		}
		entries = append(entries, e)
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": obj.GetUID()},
		{"op": "test", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
		{"op": "replace", "path": "/metadata/managedFields", "value": append(entries, entry)},
	})
	if err != nil {
		return err
	}
	a.Written.RecordCreated(obj)
	// Note: should this fail (the object changed in between, the process stops), the object is
	// the operator's and keeps the Update entry; the next apply to it still works, and the field
	// manager owns every field twice until an apply removes one (see handOver).
	if err := a.Client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(a.FieldManager)); err != nil {
		return fmt.Errorf("created, then handing its fields to the apply entry: %w", err)
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, desired)
}

// applyEntry is the managedFields entry an apply of obj (an apply configuration as unstructured)
// by the field manager would leave on the object it creates.
func (a Applier) applyEntry(obj runtime.Object) (metav1.ManagedFieldsEntry, error) {
	tc := a.Types
	if tc == nil {
		tc = NewTypeConverter(a.Client.Scheme(), managedfields.NewDeducedTypeConverter())
	}
	tv, err := tc.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil {
		return metav1.ManagedFieldsEntry{}, fmt.Errorf("typing the object to create: %w", err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return metav1.ManagedFieldsEntry{}, err
	}
	raw, err := set.Difference(notApplied).ToJSON()
	if err != nil {
		return metav1.ManagedFieldsEntry{}, err
	}
	return metav1.ManagedFieldsEntry{
		Manager: a.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: obj.GetObjectKind().GroupVersionKind().GroupVersion().String(),
		Time:       &metav1.Time{Time: time.Now().UTC().Truncate(time.Second)}, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: raw},
	}, nil
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
