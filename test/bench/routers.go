/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// Routers is the operator converging N ModelRouters with two InferenceService backends each,
// then reconciling each once more with nothing to do.
type Routers struct {
	N        int   `json:"n"`
	Converge Phase `json:"converge"`
	NoOp     Phase `json:"noOp"`
}

// router is the i-th ModelRouter of ns: two InferenceService backends, a rule for each.
func router(ns string, i int) *inferencev1alpha1.ModelRouter {
	ref := func(j int) inferencev1alpha1.Backend {
		name := fmt.Sprintf("model-%04d", j)
		return inferencev1alpha1.Backend{Name: name, InferenceServiceRef: &inferencev1alpha1.LocalObjectReference{Name: name}}
	}
	a, b := ref(2*i), ref(2*i+1)
	return &inferencev1alpha1.ModelRouter{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("model-%04d", i), Namespace: ns},
		Spec: inferencev1alpha1.ModelRouterSpec{
			Backends: []inferencev1alpha1.Backend{a, b},
			Rules: []inferencev1alpha1.RoutingRule{
				{Name: "a", Models: []string{fmt.Sprintf("m-%d-a", i)}, Backend: a.Name},
				{Name: "b", Models: []string{fmt.Sprintf("m-%d-b", i)}, Backend: b.Name},
			},
			DefaultRoute: &a.Name,
		},
	}
}

// routers converges 2n InferenceServices, then n ModelRouters over them, with the operator
// process; the window holds the routers alone.
func (b *bench) routers(ctx context.Context, n int) (*Routers, error) {
	ns := fmt.Sprintf("routers-%d", n)
	if err := b.namespace(ctx, ns); err != nil {
		return nil, err
	}
	defer func() { _ = b.deleteServices(ctx, ns) }()
	p, err := b.startProcess(ctx, ns, b.o.settings(), b.o.CacheTransform)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	b.logf("N=%d routers: %d InferenceService backends first", n, 2*n)
	if err := parallel(2*n, b.o.Workers, func(i int) error { return b.user.Create(ctx, isvc(ns, i)) }); err != nil {
		return nil, err
	}
	if err := b.waitConverged(ctx, ns, 2*n, 10*time.Minute); err != nil {
		return nil, err
	}
	if _, err := waitQuiet(ctx, p, "inferenceservice", 0, time.Second, nil); err != nil {
		return nil, err
	}
	b.logf("N=%d routers: create and wait for convergence", n)
	out := &Routers{N: n}
	w, err := b.openWindow(ctx, p, "modelrouter")
	if err != nil {
		return nil, err
	}
	if err := parallel(n, b.o.Workers, func(i int) error { return b.user.Create(ctx, router(ns, i)) }); err != nil {
		return nil, err
	}
	if err := b.waitRouters(ctx, ns, n, 10*time.Minute); err != nil {
		return nil, err
	}
	ph, err := w.close(ctx, p, n, map[string]int{"POST modelrouters": n})
	if err != nil {
		return nil, err
	}
	out.Converge = *ph
	if w, err = b.openWindow(ctx, p, "modelrouter"); err != nil {
		return nil, err
	}
	if err := b.touchAll(ctx, &inferencev1alpha1.ModelRouter{}, ns, n, "no-op"); err != nil {
		return nil, err
	}
	if ph, err = w.close(ctx, p, n, map[string]int{"PATCH modelrouters": n}); err != nil {
		return nil, err
	}
	out.NoOp = *ph
	b.logf("N=%d routers: converge %s, %d reconciles, requests %v; no-op %d reconciles, requests %v",
		n, out.Converge.Took, out.Converge.Reconciles, out.Converge.Requests, out.NoOp.Reconciles, out.NoOp.Requests)
	return out, nil
}

// waitRouters waits until every ModelRouter of ns has a current observedGeneration.
func (b *bench) waitRouters(ctx context.Context, ns string, n int, timeout time.Duration) error {
	return poll(ctx, timeout, func() bool {
		var list inferencev1alpha1.ModelRouterList
		if b.observer.List(ctx, &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy) != nil || len(list.Items) < n {
			return false
		}
		for _, r := range list.Items {
			if r.Status.ObservedGeneration != r.Generation {
				return false
			}
		}
		return true
	})
}
