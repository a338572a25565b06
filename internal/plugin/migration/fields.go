/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package migration

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin/owners"
)

var (
	templateLabelsPath      = fieldpath.MakePathOrDie("spec", "template", "metadata", "labels")
	templateAnnotationsPath = fieldpath.MakePathOrDie("spec", "template", "metadata", "annotations")
	// notFields are paths that are not the object's content: what every write changes, and the
	// record annotations the migration write itself removes (RecordsRemoved lists them).
	notFields = []fieldpath.Path{
		fieldpath.MakePathOrDie("metadata", "managedFields"),
		fieldpath.MakePathOrDie("metadata", "resourceVersion"),
		fieldpath.MakePathOrDie("metadata", "generation"),
		fieldpath.MakePathOrDie("metadata", "annotations", ownership.RecordLabels),
		fieldpath.MakePathOrDie("metadata", "annotations", ownership.RecordAnnotations),
		fieldpath.MakePathOrDie("metadata", "annotations", ownership.LegacyHash),
		fieldpath.MakePathOrDie("status"),
	}
)

// otherFields adds a row for every field other than a pod-template key that the first apply
// prunes, or that the migration releases (someone owned it before, nobody does afterwards).
func otherFields(out *Outcome, migrated, after *unstructured.Unstructured, beforeIdx, afterIdx *owners.Index) error {
	beforeSet, err := fieldSet(migrated)
	if err != nil {
		return err
	}
	afterSet, err := fieldSet(after)
	if err != nil {
		return err
	}
	skip := func(p fieldpath.Path) bool {
		for _, prefix := range append([]fieldpath.Path{templateLabelsPath, templateAnnotationsPath}, notFields...) {
			if hasPrefix(p, prefix) {
				return true
			}
		}
		return false
	}
	beforeSet.Leaves().Difference(afterSet).Iterate(func(p fieldpath.Path) {
		if skip(p) {
			return
		}
		id := PartField + ":" + strings.TrimPrefix(p.String(), ".")
		out.Pruned = append(out.Pruned, id)
		out.Keys = append(out.Keys, Key{Part: PartField, Key: strings.TrimPrefix(p.String(), "."), Value: valueAt(migrated, p), Action: ActionPrune, Owners: []owners.Owner{}})
	})
	afterSet.Leaves().Iterate(func(p fieldpath.Path) {
		if skip(p) || len(afterIdx.Owners(p)) > 0 || len(beforeIdx.Owners(p)) == 0 {
			return
		}
		v := valueAt(after, p)
		out.Unowned = append(out.Unowned, PartField+":"+strings.TrimPrefix(p.String(), "."))
		out.Keys = append(out.Keys, Key{Part: PartField, Key: strings.TrimPrefix(p.String(), "."), Value: valueAt(migrated, p), After: &v, Action: ActionRelease, Owners: []owners.Owner{}})
	})
	return nil
}

func hasPrefix(p, prefix fieldpath.Path) bool {
	return len(p) >= len(prefix) && p[:len(prefix)].Equals(prefix)
}

func fieldSet(u *unstructured.Unstructured) (*fieldpath.Set, error) {
	tv, err := builtinTypes.ObjectToTyped(u, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	return tv.ToFieldSet()
}

// valueAt renders the value at p.
func valueAt(u *unstructured.Unstructured, p fieldpath.Path) string {
	v, _ := owners.ValueAt(u.Object, p)
	return owners.Render(v, 0)
}

// templatePath is the path of a pod-template label or annotation (field is labels or annotations).
func templatePath(field, key string) fieldpath.Path {
	return fieldpath.MakePathOrDie("spec", "template", "metadata", field, key)
}
