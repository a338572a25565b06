/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package migration

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/llmkube/operator/controllers/ownership"
)

// builtinTypes knows the schemas of the built-in kinds the operator applies.
var builtinTypes = applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)

// patchLocally runs the migration's JSON patch on live, as the API server would.
func patchLocally(live runtime.Object, patch []byte) (*unstructured.Unstructured, error) {
	doc, err := json.Marshal(live)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("decoding the migration patch: %w", err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("running the migration patch: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(out); err != nil {
		return nil, err
	}
	return asStored(u)
}

// asStored is u as the API server stores it: through its Go type, so that what the type omits
// when empty (an annotations map the patch emptied) is gone, as on the server.
func asStored(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	typedObj, err := clientgoscheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typedObj); err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typedObj)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: m}
	out.SetGroupVersionKind(u.GroupVersionKind())
	return out, nil
}

// applyLocally is the forced server-side apply of desired onto live by manager, computed by the
// API server's own field manager (k8s.io/apimachinery/pkg/util/managedfields), so that what it
// prunes, keeps and leaves unowned is what the API server will do.
//
// Note: no defaulting or admission runs here; both only add fields, and the prediction is about
// what the apply removes and who owns what afterwards.
func applyLocally(live *unstructured.Unstructured, desired any, manager string) (*unstructured.Unstructured, error) {
	applied, err := ownership.ToUnstructured(desired)
	if err != nil {
		return nil, err
	}
	gvk := schema.FromAPIVersionAndKind(live.GetAPIVersion(), live.GetKind())
	fm := managedfieldstest.NewFakeFieldManager(builtinTypes, gvk)
	out, err := fm.Apply(live.DeepCopy(), applied, manager, true)
	if err != nil {
		return nil, fmt.Errorf("simulating the first apply: %w", err)
	}
	return out.(*unstructured.Unstructured), nil
}
