/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// DefaultCRDRecheck is how often the operator looks again for a missing Gateway API CRD while an
// InferenceService asks for a gateway.
const DefaultCRDRecheck = 30 * time.Second

// optionalKind is a kind whose CRD may be missing when the operator starts, and installed later:
// the InferencePool and the HTTPRoute. The operator looks for it only when an InferenceService
// needs it, at most once per recheck period, and starts watching it once the API server serves it.
//
// Note: a controller-runtime watch of a kind whose CRD is missing fails the controller's start,
// and a read of it from the cache fails on every reconcile; so the watch is added to the running
// controller (controller.Controller.Watch starts a source added after Start at once) the first
// time the RESTMapper finds the kind. The manager's RESTMapper asks discovery again on a miss,
// which is the request the recheck period paces.
type optionalKind struct {
	gvk schema.GroupVersionKind
	// watch starts the controller's watch of the kind.
	watch func() error
	// recheck is the shortest time between two lookups of a missing kind.
	recheck time.Duration

	mu      sync.Mutex
	served  bool
	checked time.Time
}

// newOptionalKind tracks the kind gvk; once it is served, controller c watches it through src.
func newOptionalKind(gvk schema.GroupVersionKind, c controller.Controller, src source.Source, recheck time.Duration) *optionalKind {
	return &optionalKind{gvk: gvk, recheck: recheck, watch: func() error { return c.Watch(src) }}
}

// Served says whether the API server serves the kind, and makes sure the controller watches it.
// A kind once found stays found; a missing one is looked up again only when lookAgain is set and
// the recheck period has passed since the last lookup, so reconciles cost no request meanwhile.
func (k *optionalKind) Served(mapper meta.RESTMapper, lookAgain bool) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.served {
		return true, nil
	}
	if !k.checked.IsZero() && (!lookAgain || time.Since(k.checked) < k.recheck) {
		return false, nil
	}
	k.checked = time.Now()
	if _, err := mapper.RESTMapping(k.gvk.GroupKind(), k.gvk.Version); meta.IsNoMatchError(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("looking up %s: %w", groupKind(k.gvk), err)
	}
	if err := k.watch(); err != nil {
		return false, fmt.Errorf("watching %s: %w", groupKind(k.gvk), err)
	}
	k.served = true
	return true, nil
}

// Known says whether the kind was found served (and so is watched), without looking it up.
func (k *optionalKind) Known() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.served
}

// gatewayKinds are the two optional kinds spec.gateway writes.
type gatewayKinds struct {
	mapper meta.RESTMapper
	pool   *optionalKind
	route  *optionalKind
}

// missing returns those of the two kinds the API server does not serve, looking again for them
// when the recheck period has passed.
func (g *gatewayKinds) missing() ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, k := range []*optionalKind{g.pool, g.route} {
		ok, err := k.Served(g.mapper, true)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, k.gvk)
		}
	}
	return out, nil
}

// groupKind names a kind as the API server does in messages, e.g. InferencePool.inference.networking.k8s.io.
func groupKind(gvk schema.GroupVersionKind) string {
	return gvk.GroupKind().String()
}
