/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package devcluster runs the embedded local control plane of `make run`: the same kube-apiserver
// and etcd the integration suite uses, with the operator's CRDs installed and a kubeconfig written
// for kubectl.
package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Cluster is a running embedded control plane.
type Cluster struct {
	Config     *rest.Config
	Kubeconfig string
	env        *envtest.Environment
}

// ShouldStart says whether the operator has no cluster to talk to: no $KUBECONFIG, no
// ~/.kube/config, and not inside a pod.
func ShouldStart() bool {
	if os.Getenv("KUBECONFIG") != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return false
	}
	_, err := os.Stat(clientcmd.RecommendedHomeFile)
	return err != nil
}

// Start starts kube-apiserver and etcd from $KUBEBUILDER_ASSETS, installs the CRDs in crdDir, and
// writes an admin kubeconfig to kubeconfigPath.
func Start(crdDir, kubeconfigPath string) (*Cluster, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("no cluster configured and KUBEBUILDER_ASSETS is not set: use `make run`, which builds the embedded control plane first, or set KUBECONFIG")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{crdDir},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the embedded control plane: %w", err)
	}
	user, err := env.AddUser(envtest.User{Name: "llmkube-dev", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating the admin user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(kubeconfigPath), 0o700); err != nil {
		_ = env.Stop()
		return nil, err
	}
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Cluster{Config: cfg, Kubeconfig: kubeconfigPath, env: env}, nil
}

// Stop stops the control plane; its data goes with it.
func (c *Cluster) Stop() error { return c.env.Stop() }

// ApplySamples server-side applies every YAML document in dir, as a person would with
// `kubectl apply --server-side`, under the field manager given.
func ApplySamples(ctx context.Context, c client.Client, dir, fieldManager string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var applied []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return applied, err
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(data, &u.Object); err != nil {
			return applied, fmt.Errorf("%s: %w", f, err)
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return applied, fmt.Errorf("applying %s: %w", f, err)
		}
		applied = append(applied, u.GetKind()+"/"+u.GetName())
	}
	return applied, nil
}
