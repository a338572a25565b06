/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package diff shows what the operator's next apply would change. For each object of the plan it
// first asks what the reconciler asks (does the field manager already own exactly this?); only
// when the operator would write is the object sent as a server-side dry-run apply under the
// operator's field manager (forced, as the operator sends it), and the answer compared with the
// live object.
package diff

import (
	"context"
	"fmt"

	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
	"github.com/llmkube/operator/internal/plugin"
)

// Actions of an object.
const (
	ActionCreate    = "create"
	ActionChange    = "change"
	ActionDelete    = "delete"
	ActionUnchanged = "unchanged"
	// ActionRefused is an existing object the owner does not control: the operator refuses to
	// write it (ownership.NotControlled) and does nothing to it.
	ActionRefused = "refused"
)

// Object is the diff of one object.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Action    string `json:"action"`
	// Diff is a unified diff of the live object and the dry-run result (YAML, without
	// managedFields, resourceVersion and status); empty when unchanged or refused.
	Diff string `json:"diff"`
	// Refused says who controls the object and that the operator leaves it untouched, when the
	// action is refused.
	Refused string `json:"refused,omitempty"`

	group string
}

// TypedName is the object as kubectl's -o name prints it: deployment.apps/NAME.
func (o Object) TypedName() string {
	return plugin.ObjectName(schema.GroupKind{Group: o.group, Kind: o.Kind}, o.Name)
}

// Compute diffs each object of the plan, in order, and then each deletion: what the operator's
// next reconcile would write.
//
// Note: an object that exists and that the owner does not control is refused by the operator's
// apply (ownership.Sync's ownership.CheckControlled): it is shown as refused, with the refusal,
// never as the change a dry-run apply would make of it.
func Compute(ctx context.Context, c client.Client, manager string, objs []plan.Object, deletions []plan.Deletion, owner metav1.Object) ([]Object, error) {
	out := make([]Object, 0, len(objs))
	for _, obj := range objs {
		o := Object{Kind: obj.Kind, Namespace: obj.Key.Namespace, Name: obj.Key.Name, Action: ActionUnchanged, group: obj.GVK().Group}
		live, err := obj.Live(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		if live != nil {
			if err := ownership.CheckControlled(live, obj.Desired); err != nil {
				o.Action, o.Refused = ActionRefused, ownership.Fail(o.Kind, obj.Key, ownership.StepOwnership, err).Error()
				out = append(out, o)
				continue
			}
		}
		send, err := obj.WouldApply(live, manager)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		if !send {
			out = append(out, o)
			continue
		}
		if err := c.Apply(ctx, obj.Desired, client.FieldOwner(manager), client.ForceOwnership, client.DryRunAll); err != nil {
			return nil, fmt.Errorf("dry-run apply of %s %s/%s refused by the API server: %w", o.Kind, o.Namespace, o.Name, err)
		}
		// controller-runtime decoded the API server's answer into the apply configuration: the
		// object after the apply.
		after, err := ownership.ToMap(obj.Desired)
		if err != nil {
			return nil, err
		}
		before := ""
		from := "/dev/null"
		o.Action = ActionCreate
		if live != nil {
			o.Action = ActionChange
			from = fmt.Sprintf("live/%s/%s/%s", o.Kind, o.Namespace, o.Name)
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
			if err != nil {
				return nil, err
			}
			// A typed read carries no apiVersion and kind; the answer of the apply does.
			gvk := obj.GVK()
			m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
			if before, err = render(m); err != nil {
				return nil, err
			}
		}
		now, err := render(after)
		if err != nil {
			return nil, err
		}
		if o.Diff, err = unified(before, now, from, fmt.Sprintf("applied/%s/%s/%s", o.Kind, o.Namespace, o.Name)); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	for _, d := range deletions {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(d.GVK)
		switch err := c.Get(ctx, d.Key, live); {
		case apierrors.IsNotFound(err) || isNoMatch(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading %s %s: %w", d.GVK.Kind, d.Key, err)
		}
		if !metav1.IsControlledBy(live, owner) {
			continue
		}
		before, err := render(live.Object)
		if err != nil {
			return nil, err
		}
		o := Object{Kind: d.GVK.Kind, Namespace: d.Key.Namespace, Name: d.Key.Name, Action: ActionDelete, group: d.GVK.Group}
		if o.Diff, err = unified(before, "", fmt.Sprintf("live/%s/%s/%s", o.Kind, o.Namespace, o.Name), "/dev/null"); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Refused is whether any of objs is refused.
func Refused(objs []Object) bool {
	for _, o := range objs {
		if o.Action == ActionRefused {
			return true
		}
	}
	return false
}

func unified(a, b, from, to string) (string, error) {
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b), FromFile: from, ToFile: to, Context: 3,
	})
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

func isNoMatch(err error) bool { return err != nil && meta.IsNoMatchError(err) }
