/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package devcluster runs the embedded local cluster of `make run`: the kube-apiserver and etcd the
// integration suite uses, with the operator's CRDs installed and a kubeconfig written for kubectl,
// plus kube-controller-manager, kube-scheduler and KWOK with fake GPU nodes, so that Deployments
// get ReplicaSets and pods that are scheduled and reported Running and Ready, Services get
// EndpointSlices, and PersistentVolumeClaims bind.
//
// Every binary is built from source at the version of test/envtest/tools/go.mod
// (hack/build-control-plane.sh) and found in $KUBEBUILDER_ASSETS.
package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/llmkube/operator/internal/node"
)

// StartTimeout bounds how long Start waits for the fake nodes to become Ready once the components
// run; on 2 busy cores this takes a few seconds.
const StartTimeout = 2 * time.Minute

// Cluster is a running embedded cluster.
type Cluster struct {
	Config     *rest.Config
	Kubeconfig string
	// LogDir holds a log file per component (kube-controller-manager.log, kube-scheduler.log,
	// kwok.log).
	LogDir     string
	env        *envtest.Environment
	components []*component
	// EnvStopTook is how long the API server and etcd took to stop, measured by Stop.
	EnvStopTook time.Duration
	// node is the real node of StartWithNode; nil with KWOK's fake nodes.
	node *node.Node
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

// Start starts kube-apiserver and etcd from $KUBEBUILDER_ASSETS, installs the CRDs in crdDir,
// writes an admin kubeconfig to kubeconfigPath, creates the fake nodes and the default
// StorageClass, and starts kube-controller-manager, kube-scheduler and KWOK with their logs in a
// logs folder beside the kubeconfig. It returns once the nodes are Ready.
func Start(crdDir, kubeconfigPath string) (*Cluster, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("no cluster configured and KUBEBUILDER_ASSETS is not set: use `make run`, which builds the embedded control plane first, or set KUBECONFIG")
	}
	if err := checkAssets(assets); err != nil {
		return nil, err
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
	c := &Cluster{Config: cfg, Kubeconfig: kubeconfigPath, LogDir: filepath.Join(filepath.Dir(kubeconfigPath), "logs"), env: env}
	fail := func(err error) (*Cluster, error) {
		_ = c.Stop()
		return nil, err
	}
	if err := writeAdminKubeconfig(env, kubeconfigPath); err != nil {
		return fail(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return fail(err)
	}
	if err := createNodesAndStorage(ctx, cl); err != nil {
		return fail(err)
	}
	if c.components, err = startComponents(assets, kubeconfigPath, c.LogDir); err != nil {
		return fail(err)
	}
	if err := waitForNodes(ctx, cl, c.components); err != nil {
		return fail(fmt.Errorf("%w (logs in %s)", err, c.LogDir))
	}
	return c, nil
}

// writeAdminKubeconfig writes a kubeconfig of a cluster admin (system:masters) for kubectl, the
// components and, with a real node, the kubelet and kube-proxy.
func writeAdminKubeconfig(env *envtest.Environment, path string) error {
	user, err := env.AddUser(envtest.User{Name: "llmkube-dev", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating the admin user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, kubeconfig, 0o600)
}

// Stop stops the components, then the control plane; its data goes with it.
func (c *Cluster) Stop() error {
	var errs []error
	// The reverse of the start order: KWOK and the controllers go before the API server they
	// talk to, so none of them logs a storm of connection errors on the way out.
	// A real node's processes and containers go first, its network last: the API server listens
	// on the node's link.
	if c.node != nil {
		errs = append(errs, c.node.StopProcesses())
	}
	for i := len(c.components) - 1; i >= 0; i-- {
		errs = append(errs, c.components[i].stop())
	}
	c.components = nil
	envStart := time.Now()
	errs = append(errs, c.env.Stop())
	c.EnvStopTook = time.Since(envStart)
	if c.node != nil {
		errs = append(errs, c.node.Stop())
		c.node = nil
	}
	return errors.Join(errs...)
}

// ApplySamples server-side applies every YAML document in dir, as a person would with
// `kubectl apply --server-side`, under the field manager given.
//
// Note: `make run` no longer calls it: a manager of its own would co-own every sample field, and
// a person who drops a key from a sample and applies it again would see the key stay. The README's quick start
// has the user apply the samples with kubectl instead.
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
