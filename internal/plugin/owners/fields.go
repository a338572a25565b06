/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package owners

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/llmkube/operator/controllers/ownership"
)

// maxValue bounds a value in a table cell; -o json has the same cut, so scripts compare owners,
// not values, of long fields.
const maxValue = 60

// Fields lists every leaf field desired (an apply configuration of kind) sets, with its value on
// live (nil when the object does not exist) and its owners there.
func Fields(tc managedfields.TypeConverter, kind string, live runtime.Object, desired any, manager string) ([]Row, error) {
	want, err := ownership.ToMap(desired)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: want}
	tv, err := tc.ObjectToTyped(u, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return nil, err
	}
	var have map[string]any
	idx := &Index{}
	if live != nil {
		if have, err = runtime.DefaultUnstructuredConverter.ToUnstructured(live); err != nil {
			return nil, err
		}
		acc, err := metaOf(live)
		if err != nil {
			return nil, err
		}
		if idx, err = NewIndex(acc); err != nil {
			return nil, err
		}
	}
	var rows []Row
	set.Leaves().Iterate(func(p fieldpath.Path) {
		if len(p) > 0 && p[0].FieldName != nil && (*p[0].FieldName == "apiVersion" || *p[0].FieldName == "kind" ||
			(*p[0].FieldName == "metadata" && len(p) == 2 && (*p[1].FieldName == "name" || *p[1].FieldName == "namespace"))) {
			return // identity, never owned
		}
		owners := idx.Owners(p)
		if owners == nil {
			owners = []Owner{}
		}
		w, _ := ValueAt(want, p)
		v, present := ValueAt(have, p)
		wv, lv := Render(w, maxValue), Render(v, maxValue)
		r := Row{Part: kind, Key: strings.TrimPrefix(p.String(), "."), Value: lv, Want: &wv, Owners: owners}
		others := Others(owners, manager)
		switch {
		case !present:
			r.Value, r.Source = "<absent>", SourceOperator
			r.Flags = append(r.Flags, FlagPending)
		case Owns(owners, manager):
			r.Source = SourceOperator
		case len(owners) > 0:
			r.Source = SourceOther
		default:
			r.Source = SourceUnowned
			r.Flags = append(r.Flags, FlagUnowned)
		}
		if present && lv != wv && len(others) > 0 {
			r.Flags = append(r.Flags, FlagConflict)
			r.Note = Managers(others) + " set it; the operator forces its value back on its next apply"
		}
		rows = append(rows, r)
	})
	return rows, nil
}

func metaOf(obj runtime.Object) ([]metav1.ManagedFieldsEntry, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	return m.GetManagedFields(), nil
}
