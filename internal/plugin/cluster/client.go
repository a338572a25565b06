/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package cluster is the plugin's access to the cluster: a client built from kubectl's flags, the
// objects a command names (read, listed or decoded from a manifest), the operator's own plan for
// each of them read through that client, and errors that say what to do.
package cluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers"
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
	// NamespaceGiven is true when -n named it: a manifest of another namespace is then an error,
	// as kubectl's.
	NamespaceGiven bool
}

// New builds a client from kubectl's flags.
func New(flags *genericclioptions.ConfigFlags) (*Client, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w (check --kubeconfig and --context)", err)
	}
	ns, given, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, Explain(err, "connecting", "", ns)
	}
	return &Client{Client: c, Namespace: ns, NamespaceGiven: given}, nil
}
