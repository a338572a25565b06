//go:build !nodevplane

/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/internal/devcluster"
)

// devPlane is the embedded development control plane (`make run` on a machine without a cluster).
//
// Note: this file is the only place cmd/operator links internal/devcluster, and through it envtest
// and its process runner. Release images build with `-tags nodevplane` (devplane_off.go), so the
// binary a cluster runs carries none of it; `go build ./cmd/operator` and `make run` keep it.
type devPlane struct{}

// available says whether this build can start the embedded control plane.
func (devPlane) available() bool { return true }

func (devPlane) shouldStart() bool { return devcluster.ShouldStart() }

// nodeFits says whether this machine can run the real node, so that `make run` builds its
// binaries and images before it starts the operator (--dev-node-preflight).
func (devPlane) nodeFits() error { return devcluster.CanRunContainers() }

func (devPlane) start(crdDir, kubeconfig, imagesDir string, kwokOnly bool) (localCluster, error) {
	cluster, nodes, err := devcluster.StartLocal(crdDir, kubeconfig, imagesDir, kwokOnly)
	if err != nil {
		return localCluster{}, err
	}
	return localCluster{cfg: cluster.Config, stop: cluster.Stop, nodes: nodes, routerProxyImage: cluster.RouterProxyImage(imagesDir)}, nil
}

func (devPlane) applySamples(ctx context.Context, c client.Client, dir, fieldManager string) ([]string, error) {
	return devcluster.ApplySamples(ctx, c, dir, fieldManager)
}
