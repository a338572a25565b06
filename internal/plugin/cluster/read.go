/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

// Selection is what a command names, in one of kubectl's ways: TYPE/NAME... or TYPE NAME...
// (Args) in the client's namespace, a manifest (File; "-" reads Stdin), or every object of every
// namespace (All).
type Selection struct {
	Args  []string
	File  string
	Stdin io.Reader
	All   bool
	// ApplyAs is the field manager a manifest (File) is previewed as; "" is the one that applied
	// the live object (see manifestManager).
	ApplyAs string
}

// Select reads the InferenceServices and ModelRouters s names, each with its live Deployment.
func (c *Client) Select(ctx context.Context, s Selection) ([]*Objects, error) {
	switch {
	case s.File != "":
		r := s.Stdin
		if s.File != "-" {
			f, err := os.Open(s.File)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		return c.Decode(ctx, r, c.Namespace, s.ApplyAs)
	case s.All:
		return c.ReadAll(ctx, "")
	}
	ts, err := ParseTargets(s.Args)
	if err != nil {
		return nil, err
	}
	out := make([]*Objects, 0, len(ts))
	for _, t := range ts {
		o, err := c.ReadTarget(ctx, c.Namespace, t)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// ReadTarget reads the target of ns and its Deployment.
func (c *Client) ReadTarget(ctx context.Context, ns string, t Target) (*Objects, error) {
	out := &Objects{}
	var obj client.Object
	if t.Kind == "ModelRouter" {
		out.Router = &inferencev1alpha1.ModelRouter{}
		obj = out.Router
	} else {
		out.ISVC = &inferencev1alpha1.InferenceService{}
		obj = out.ISVC
	}
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: t.Name}, obj); err != nil {
		return nil, Explain(err, "reading "+t.Kind, t.Name, ns)
	}
	return out, c.readDeployment(ctx, out)
}

// ReadAll reads every InferenceService and ModelRouter of ns (every namespace when empty), each
// with its Deployment, in namespace and name order.
func (c *Client) ReadAll(ctx context.Context, ns string) ([]*Objects, error) {
	isvcs := &inferencev1alpha1.InferenceServiceList{}
	if err := c.Client.List(ctx, isvcs, client.InNamespace(ns)); err != nil {
		return nil, Explain(err, "listing InferenceService", "", ns)
	}
	routers := &inferencev1alpha1.ModelRouterList{}
	if err := c.Client.List(ctx, routers, client.InNamespace(ns)); err != nil {
		return nil, Explain(err, "listing ModelRouter", "", ns)
	}
	var out []*Objects
	for i := range isvcs.Items {
		out = append(out, &Objects{ISVC: &isvcs.Items[i]})
	}
	for i := range routers.Items {
		out = append(out, &Objects{Router: &routers.Items[i]})
	}
	for _, o := range out {
		if err := c.readDeployment(ctx, o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Client) readDeployment(ctx context.Context, o *Objects) error {
	d := &appsv1.Deployment{}
	switch err := c.Client.Get(ctx, types.NamespacedName{Namespace: o.Namespace(), Name: o.DeploymentName()}, d); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return Explain(err, "reading Deployment", o.DeploymentName(), o.Namespace())
	default:
		o.Deployment = d
	}
	return nil
}

// LiveOf reads the live object an apply configuration names; nil when it does not exist. It
// returns the object's kind.
func (c *Client) LiveOf(ctx context.Context, ac runtime.ApplyConfiguration) (runtime.Object, string, error) {
	u, err := ownership.ToUnstructured(ac)
	if err != nil {
		return nil, "", err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	switch err := c.Client.Get(ctx, types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, live); {
	case apierrors.IsNotFound(err):
		return nil, u.GetKind(), nil
	case err != nil:
		return nil, "", Explain(err, "reading "+u.GetKind(), u.GetName(), u.GetNamespace())
	}
	return live, u.GetKind(), nil
}

// Decode reads the InferenceServices and ModelRouters of a manifest (YAML or JSON, documents
// separated by ---, kind: List expanded), in ns unless they name a namespace, and each one's live
// Deployment. A Model is skipped: the operator applies nothing for it. Other kinds are refused:
// the plugin previews only what the operator applies for.
//
// applyAs is the field manager that will apply it ("": manifestManager's guess).
func (c *Client) Decode(ctx context.Context, r io.Reader, ns, applyAs string) ([]*Objects, error) {
	docs, err := documents(r)
	if err != nil {
		return nil, err
	}
	var out []*Objects
	for _, u := range docs {
		switch {
		case u.GetNamespace() == "":
			u.SetNamespace(ns)
		case c.NamespaceGiven && u.GetNamespace() != ns:
			// As kubectl: -n is a promise about where the manifest lands.
			return nil, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q: pass the same namespace, or leave out -n", u.GetNamespace(), ns)
		}
		o := &Objects{}
		var obj client.Object
		switch gvk := u.GroupVersionKind(); {
		case gvk.Group == inferencev1alpha1.GroupVersion.Group && gvk.Kind == "InferenceService":
			o.ISVC = &inferencev1alpha1.InferenceService{}
			obj = o.ISVC
		case gvk.Group == inferencev1alpha1.GroupVersion.Group && gvk.Kind == "ModelRouter":
			o.Router = &inferencev1alpha1.ModelRouter{}
			obj = o.Router
		case gvk.Group == inferencev1alpha1.GroupVersion.Group && gvk.Kind == "Model":
			continue // the operator writes only a Model's status
		default:
			return nil, fmt.Errorf("the manifest has a %s %s: diff -f previews InferenceServices and ModelRouters (and skips Models)", gvk.Kind, u.GetName())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		// The object as the API server would store it: defaults filled in by a dry-run create or
		// update, so the plan sees what the operator will see.
		if err := c.defaulted(ctx, obj, applyAs); err != nil {
			return nil, err
		}
		if err := c.readDeployment(ctx, o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// documents are the objects of a manifest, the items of a kind: List in their place.
func documents(r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("reading the manifest: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if !u.IsList() {
			out = append(out, u)
			continue
		}
		list, err := u.ToList()
		if err != nil {
			return nil, fmt.Errorf("reading the manifest's List: %w", err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
}

// defaulted fills obj with what admission and defaulting make of it: a server-side dry-run apply
// (nothing is written), whose answer carries the live object's uid and generation when it exists.
//
// Note: the dry-run applies as the field manager that will apply the manifest (applyAs, else
// manifestManager's guess), never as a manager of its own: an apply removes only fields its own
// manager owned, so a field the manifest drops would stay in a foreign manager's dry-run and the
// preview would say "no change" before a change.
func (c *Client) defaulted(ctx context.Context, obj client.Object, applyAs string) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	uo := &unstructured.Unstructured{Object: u}
	uo.SetGroupVersionKind(inferencev1alpha1.GroupVersion.WithKind(reflect.TypeOf(obj).Elem().Name()))
	unstructured.RemoveNestedField(uo.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(uo.Object, "status")
	if applyAs == "" {
		applyAs = c.manifestManager(ctx, uo.DeepCopy())
	}
	if err := c.Client.Patch(ctx, uo, client.Apply, client.FieldOwner(applyAs), client.ForceOwnership, client.DryRunAll); err != nil {
		return fmt.Errorf("the API server refuses %s %s: %w", uo.GetKind(), uo.GetName(), err)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(uo.Object, obj)
}

// DefaultApplyManager is the field manager of kubectl apply --server-side, which a manifest is
// previewed as when the live object names no other.
const DefaultApplyManager = "kubectl"

// manifestManager guesses who applies the manifest of u: the one field manager that applied the
// live object's spec (a GitOps tool: argocd-controller, kustomize-controller; a person's kubectl),
// else DefaultApplyManager. --apply-as names it when the guess would be wrong.
func (c *Client) manifestManager(ctx context.Context, u *unstructured.Unstructured) string {
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return DefaultApplyManager
	}
	var appliers []string
	for _, e := range u.GetManagedFields() {
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			appliers = append(appliers, e.Manager)
		}
	}
	if len(appliers) == 1 {
		return appliers[0]
	}
	return DefaultApplyManager
}
