/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// watchedKinds are the kinds whose informers the operator runs: what its three controllers
// watch (For, Owns and Watches of controllers/inferenceservice, model and modelrouter: the
// kinds it labels as its own, ownership.LabelledKinds, PersistentVolumeClaims included: every
// InferenceService's plan reads its inline cache claim, to delete one the spec no longer asks
// for, O20) and Secrets as metadata only. TestWatchedKinds holds the list to the WATCH requests
// of the operator's own wiring.
func watchedKinds() []client.Object {
	secrets := &metav1.PartialObjectMetadata{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	out := []client.Object{&inferencev1alpha1.InferenceService{}, &inferencev1alpha1.Model{}, &inferencev1alpha1.ModelRouter{}, secrets}
	return append(out, ownership.LabelledKinds()...)
}

// startWatches runs the operator's informers, and nothing else, over namespace ns: a
// controller-runtime cache with the operator's options (controllers.CacheOptions with the
// transform, through cacheOptions) and an informer of every watchedKinds, synced before it
// returns. It is what the API server serves an idle operator: the floor+watches phase runs the
// floor beside it, so that the floor pays for watch events as the operator does.
func startWatches(ctx context.Context, cfg *rest.Config, ns, transform string) (stop func(), err error) {
	opts, err := cacheOptions(transform, ns)
	if err != nil {
		return nil, err
	}
	opts.Scheme = testenv.Scheme()
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	for _, obj := range watchedKinds() {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return nil, fmt.Errorf("informer of %T: %w", obj, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(cctx) }()
	stop = func() { cancel(); <-done }
	if !c.WaitForCacheSync(ctx) {
		stop()
		return nil, fmt.Errorf("the watches' cache did not sync")
	}
	return stop, nil
}
