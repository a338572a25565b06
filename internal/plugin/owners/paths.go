/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package owners

// This file reads the value at a structured-merge-diff field path (as managedFields name fields)
// in an unstructured object.

import (
	"encoding/json"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// ValueAt reads the value at p in an unstructured object.
func ValueAt(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		case pe.Key != nil:
			found := false
			l, _ := cur.([]any)
			for _, item := range l {
				m, ok := item.(map[string]any)
				if ok && matches(m, *pe.Key) {
					cur, found = item, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case pe.Value != nil:
			found := false
			l, _ := cur.([]any)
			for _, item := range l {
				if value.Equals(value.NewValueInterface(item), *pe.Value) {
					cur, found = item, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case pe.Index != nil:
			l, _ := cur.([]any)
			if *pe.Index >= len(l) {
				return nil, false
			}
			cur = l[*pe.Index]
		}
	}
	return cur, true
}

func matches(m map[string]any, key value.FieldList) bool {
	for _, f := range key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}

// Render is a value as compact JSON without quotes around a plain string, cut to max bytes (0:
// no cut).
func Render(v any, max int) string {
	var s string
	if str, ok := v.(string); ok {
		s = str
	} else {
		data, _ := json.Marshal(v)
		s = string(data)
	}
	if max > 0 && len(s) > max {
		s = s[:max-3] + "..."
	}
	return s
}
