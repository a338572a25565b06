/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// ToMap is v (an apply configuration, or any API value) as the JSON map an apply of it sends.
//
// Note: through JSON, not through the Go type (runtime.DefaultUnstructuredConverter), whose
// zero-valued fields would add paths the apply never sends. Numbers decode as apimachinery's own
// decoder reads them (int64 when whole), so the map compares with an object read from the API
// server. This is the one copy of that round trip: the no-op check, conflict detection, the
// migration and kubectl llmkube all call it.
func ToMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := utiljson.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ToUnstructured is ToMap as an unstructured object.
func ToUnstructured(v any) (*unstructured.Unstructured, error) {
	m, err := ToMap(v)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
