/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package diff shows what the operator's next apply would change: each desired object is sent as
// a server-side dry-run apply under the operator's field manager (forced, as the operator sends
// it), and the answer is compared with the live object.
package diff

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/operator/controllers/ownership"
)

// Actions of an object.
const (
	ActionCreate    = "create"
	ActionChange    = "change"
	ActionUnchanged = "unchanged"
)

// Object is the diff of one object.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Action    string `json:"action"`
	// Diff is a unified diff of the live object and the dry-run result (YAML, without
	// managedFields, resourceVersion and status); empty when unchanged.
	Diff string `json:"diff"`
}

// Compute dry-runs the apply of each desired object under manager and diffs it with the live one.
func Compute(ctx context.Context, c client.Client, manager string, desired []runtime.ApplyConfiguration) ([]Object, error) {
	out := make([]Object, 0, len(desired))
	for _, ac := range desired {
		want, err := toMap(ac)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: want}
		o := Object{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(schema.FromAPIVersionAndKind(u.GetAPIVersion(), u.GetKind()))
		switch err := c.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, live); {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return nil, fmt.Errorf("reading %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		ownership.MarkManaged(ac) // as the operator's own apply does
		if err := c.Apply(ctx, ac, client.FieldOwner(manager), client.ForceOwnership, client.DryRunAll); err != nil {
			return nil, fmt.Errorf("dry-run apply of %s %s/%s refused by the API server: %w", o.Kind, o.Namespace, o.Name, err)
		}
		// controller-runtime decoded the API server's answer into ac: the object after the apply.
		after, err := toMap(ac)
		if err != nil {
			return nil, err
		}
		before := ""
		if live != nil {
			if before, err = render(live.Object); err != nil {
				return nil, err
			}
		}
		now, err := render(after)
		if err != nil {
			return nil, err
		}
		from := fmt.Sprintf("live/%s/%s/%s", o.Kind, o.Namespace, o.Name)
		if live == nil {
			from = "/dev/null"
		}
		o.Diff, err = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(before), B: difflib.SplitLines(now),
			FromFile: from, ToFile: fmt.Sprintf("applied/%s/%s/%s", o.Kind, o.Namespace, o.Name), Context: 3,
		})
		if err != nil {
			return nil, err
		}
		switch {
		case live == nil:
			o.Action = ActionCreate
		case o.Diff != "":
			o.Action = ActionChange
		default:
			o.Action = ActionUnchanged
		}
		out = append(out, o)
	}
	return out, nil
}

// render is obj as YAML without what every write changes and what the operator never writes.
func render(obj map[string]any) (string, error) {
	u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(u.Object, "status")
	data, err := yaml.Marshal(u.Object)
	return string(data), err
}

func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(data, &out)
}
