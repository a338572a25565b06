/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// syncer is what readiness needs of the manager's cache (controller-runtime's cache.Cache).
type syncer interface {
	WaitForCacheSync(ctx context.Context) bool
}

// cacheSynced answers /readyz: ready once every informer of the cache has listed its objects.
//
// Note: a Ping answered ready as soon as the probe server listened, before the cache had listed
// anything; a replica that reports ready then serves object gauges of an empty cache (every
// InferenceService missing from the dashboards) and a rollout of the operator's Deployment moves
// on. A second caps the wait, under the kubelet's default probe timeout.
func cacheSynced(c syncer) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the informer cache has not synced yet")
		}
		return nil
	}
}
