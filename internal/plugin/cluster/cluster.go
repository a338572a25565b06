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
	"net"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// Scheme knows the built-in kinds and the operator's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = inferencev1alpha1.AddToScheme(s)
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
