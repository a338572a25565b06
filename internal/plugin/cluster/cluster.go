/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package cluster is the plugin's access to the cluster: a client built from kubectl's flags, the
// objects a command names, and errors that say what to do.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// Scheme knows every kind the operator reads or writes, as the operator's does.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = controllers.AddToScheme(s)
	return s
}

// Client talks to the cluster kubectl's flags name.
type Client struct {
	client.Client
	// Namespace is -n, else the kubeconfig context's namespace, else "default".
	Namespace string
}

// New builds a client from kubectl's flags.
func New(flags *genericclioptions.ConfigFlags) (*Client, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w (check --kubeconfig and --context)", err)
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, Explain(err, "connecting", "", ns)
	}
	return &Client{Client: c, Namespace: ns}, nil
}

// Target is an object a command names: isvc/NAME or mr/NAME.
type Target struct {
	// Kind is "InferenceService" or "ModelRouter".
	Kind string
	Name string
}

// Short is the target as typed: isvc/NAME or mr/NAME.
func (t Target) Short() string {
	if t.Kind == "ModelRouter" {
		return "mr/" + t.Name
	}
	return "isvc/" + t.Name
}

// ParseTarget reads isvc/NAME or mr/NAME (and the kinds' other names).
func ParseTarget(arg string) (Target, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok || name == "" {
		return Target{}, fmt.Errorf("%q: name an object as isvc/NAME or mr/NAME", arg)
	}
	switch strings.ToLower(kind) {
	case "isvc", "inferenceservice", "inferenceservices":
		return Target{Kind: "InferenceService", Name: name}, nil
	case "mr", "modelrouter", "modelrouters":
		return Target{Kind: "ModelRouter", Name: name}, nil
	}
	return Target{}, fmt.Errorf("%q: unknown kind %q: use isvc/NAME or mr/NAME", arg, kind)
}

// Objects are a target and its live Deployment.
type Objects struct {
	ISVC   *inferencev1alpha1.InferenceService
	Router *inferencev1alpha1.ModelRouter
	// Deployment is the generated Deployment; nil when it does not exist yet.
	Deployment *appsv1.Deployment
}

// DeploymentName is the generated Deployment's name.
func (o Objects) DeploymentName() string {
	if o.Router != nil {
		return modelrouter.Name(o.Router)
	}
	return o.ISVC.Name
}

// Target reads the target and its Deployment.
func (c *Client) Target(ctx context.Context, ns string, t Target) (*Objects, error) {
	key := types.NamespacedName{Namespace: ns, Name: t.Name}
	out := &Objects{}
	var obj client.Object
	if t.Kind == "ModelRouter" {
		out.Router = &inferencev1alpha1.ModelRouter{}
		obj = out.Router
	} else {
		out.ISVC = &inferencev1alpha1.InferenceService{}
		obj = out.ISVC
	}
	if err := c.Client.Get(ctx, key, obj); err != nil {
		return nil, Explain(err, "reading "+t.Kind, t.Name, ns)
	}
	d := &appsv1.Deployment{}
	switch err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: out.DeploymentName()}, d); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, Explain(err, "reading Deployment", out.DeploymentName(), ns)
	default:
		out.Deployment = d
	}
	return out, nil
}

// Explain turns an error of doing what on the object named (kind in what) into a message that
// says what to do.
func Explain(err error, what, name, ns string) error {
	kind := strings.TrimPrefix(strings.TrimPrefix(what, "reading "), "listing ")
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && name == "" && strings.Contains(err.Error(), "the server could not find the requested resource"):
		return fmt.Errorf("%s: the llmkube CRDs are not installed on this cluster: install the operator (helm install llmkube charts/llmkube, or kubectl apply -f config/crd/bases): %w", what, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("no %s %q in namespace %q: check the name with `kubectl get %s -n %s`, or pass -n NAMESPACE", kind, name, ns, strings.ToLower(kind)+"s", ns)
	case apierrors.IsForbidden(err):
		resource := strings.ToLower(kind) + "s"
		return fmt.Errorf("%s: no access (%s): ask your cluster admin for get and list on %s in namespace %q; check with `kubectl auth can-i list %s -n %s`",
			what, err.Error(), resource, ns, resource, ns)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the API server does not accept your credentials: log in again or check --kubeconfig and --context", what)
	case errors.As(err, &dnsErr) || errors.As(err, &opErr):
		return fmt.Errorf("%s: cannot reach the API server: %w (check --kubeconfig, --context and --server)", what, err)
	}
	return fmt.Errorf("%s %s: %w", what, name, err)
}

// LiveOf reads the live object an apply configuration names; nil when it does not exist. It
// returns the object's kind.
func (c *Client) LiveOf(ctx context.Context, ac runtime.ApplyConfiguration) (runtime.Object, string, error) {
	data, err := json.Marshal(ac)
	if err != nil {
		return nil, "", err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
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

// Short is the object as typed: isvc/NAME or mr/NAME.
func (o *Objects) Short() string {
	if o.Router != nil {
		return "mr/" + o.Router.Name
	}
	return "isvc/" + o.ISVC.Name
}

// Namespace is the object's namespace.
func (o *Objects) Namespace() string { return o.Object().GetNamespace() }

// Object is the InferenceService or the ModelRouter.
func (o *Objects) Object() client.Object {
	if o.Router != nil {
		return o.Router
	}
	return o.ISVC
}

// ParseTargets reads TYPE/NAME... or TYPE NAME... (kubectl's two forms).
func ParseTargets(args []string) ([]Target, error) {
	if len(args) > 0 && !strings.Contains(args[0], "/") {
		if len(args) == 1 {
			return nil, fmt.Errorf("%q: name an object as TYPE/NAME or TYPE NAME (isvc or mr)", args[0])
		}
		var out []Target
		for _, name := range args[1:] {
			t, err := ParseTarget(args[0] + "/" + name)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	}
	out := make([]Target, 0, len(args))
	for _, a := range args {
		t, err := ParseTarget(a)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Read reads each target of ns and its Deployment.
func (c *Client) Read(ctx context.Context, ns string, ts []Target) ([]*Objects, error) {
	out := make([]*Objects, 0, len(ts))
	for _, t := range ts {
		o, err := c.Target(ctx, ns, t)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Owners reads every InferenceService and ModelRouter of ns (every namespace when empty), each
// with its Deployment, in namespace and name order.
func (c *Client) Owners(ctx context.Context, ns string) ([]*Objects, error) {
	isvcs := &inferencev1alpha1.InferenceServiceList{}
	if err := c.List(ctx, isvcs, client.InNamespace(ns)); err != nil {
		return nil, Explain(err, "listing InferenceService", "", ns)
	}
	routers := &inferencev1alpha1.ModelRouterList{}
	if err := c.List(ctx, routers, client.InNamespace(ns)); err != nil {
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

// Decode reads the InferenceServices and ModelRouters of a manifest (YAML or JSON, documents
// separated by ---), in ns unless they name a namespace, and each one's live Deployment. Other
// kinds are refused: the plugin previews only what the operator applies for.
func (c *Client) Decode(ctx context.Context, r io.Reader, ns string) ([]*Objects, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*Objects
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading the manifest: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
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
		default:
			return nil, fmt.Errorf("the manifest has a %s %s: diff -f previews InferenceServices and ModelRouters", gvk.Kind, u.GetName())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		// The object as the API server would store it: defaults filled in by a dry-run create or
		// update, so the plan sees what the operator will see.
		if err := c.defaulted(ctx, obj); err != nil {
			return nil, err
		}
		if err := c.readDeployment(ctx, o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// defaulted fills obj with what admission and defaulting make of it: a server-side dry-run apply
// (nothing is written), whose answer carries the live object's uid and generation when it exists.
func (c *Client) defaulted(ctx context.Context, obj client.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	uo := &unstructured.Unstructured{Object: u}
	uo.SetGroupVersionKind(inferencev1alpha1.GroupVersion.WithKind(reflect.TypeOf(obj).Elem().Name()))
	unstructured.RemoveNestedField(uo.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(uo.Object, "status")
	if err := c.Client.Patch(ctx, uo, client.Apply, client.FieldOwner("kubectl-llmkube-diff"), client.ForceOwnership, client.DryRunAll); err != nil {
		return fmt.Errorf("the API server refuses %s %s: %w", uo.GetKind(), uo.GetName(), err)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(uo.Object, obj)
}
