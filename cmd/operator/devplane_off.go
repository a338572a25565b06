//go:build nodevplane

/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// devPlane of a release build (`-tags nodevplane`): no embedded control plane is linked, and
// --dev-control-plane=always says so instead of starting nothing.
type devPlane struct{}

var errNoDevPlane = errors.New("this operator binary is a release build without the embedded control plane (built with -tags nodevplane); use `make run` from a source checkout, or set KUBECONFIG")

func (devPlane) available() bool   { return false }
func (devPlane) shouldStart() bool { return false }

func (devPlane) nodeFits() error { return errNoDevPlane }

func (devPlane) start(string, string, string, bool) (localCluster, error) {
	return localCluster{}, errNoDevPlane
}

func (devPlane) applySamples(context.Context, client.Client, string, string) ([]string, error) {
	return nil, errNoDevPlane
}
