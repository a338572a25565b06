/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
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
	// lookup asks the API server whether it serves the kind; the RESTMapper when nil.
	lookup func(schema.GroupVersionKind) (bool, error)
	// recheck is the shortest time between two lookups of a missing kind.
	recheck time.Duration

	mu       sync.Mutex
	served   bool
	watching bool
	checked  time.Time
}

// newOptionalKind tracks the kind gvk; once it is served, controller c watches it through src.
func newOptionalKind(gvk schema.GroupVersionKind, c controller.Controller, src source.Source, recheck time.Duration) *optionalKind {
	return &optionalKind{gvk: gvk, recheck: recheck, watch: func() error { return c.Watch(src) }}
}

// Served says whether the API server serves the kind, and makes sure the controller watches it.
// A kind once found stays found until Gone says otherwise; a missing one is looked up again only
// when lookAgain is set and the recheck period has passed since the last lookup, so reconciles
// cost no request meanwhile.
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
	if ok, err := k.serves(mapper); err != nil || !ok {
		return false, err
	}
	// A kind that went away and came back is still watched: its informer lists again by itself,
	// and a second watch would deliver every event twice.
	if !k.watching {
		if err := k.watch(); err != nil {
			return false, fmt.Errorf("watching %s: %w", groupKind(k.gvk), err)
		}
		k.watching = true
	}
	k.served = true
	return true, nil
}

func (k *optionalKind) serves(mapper meta.RESTMapper) (bool, error) {
	if k.lookup != nil {
		ok, err := k.lookup(k.gvk)
		if err != nil {
			return false, fmt.Errorf("looking up %s: %w", groupKind(k.gvk), err)
		}
		return ok, nil
	}
	if _, err := mapper.RESTMapping(k.gvk.GroupKind(), k.gvk.Version); meta.IsNoMatchError(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("looking up %s: %w", groupKind(k.gvk), err)
	}
	return true, nil
}

// Gone looks the kind up again now and says whether it is no longer served (its CRD was
// deleted); it is then treated as never found, and looked for again after the recheck period.
//
// Note: asked only after a request about the kind failed, so it costs nothing in steady state.
func (k *optionalKind) Gone(mapper meta.RESTMapper) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.served {
		return false
	}
	ok, err := k.serves(mapper)
	if err != nil || ok {
		return false
	}
	k.served, k.checked = false, time.Now()
	return true
}

// Known says whether the kind was found served (and so is watched), without looking it up.
func (k *optionalKind) Known() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.served
}

// discoveryLookup asks the API server's discovery, past any cache, whether it serves a kind.
//
// Note: the manager's RESTMapper keeps a mapping once found, so it would call a kind whose CRD
// was deleted served forever.
func discoveryLookup(dc discovery.DiscoveryInterface) func(schema.GroupVersionKind) (bool, error) {
	return func(gvk schema.GroupVersionKind) (bool, error) {
		list, err := dc.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, r := range list.APIResources {
			if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
				return true, nil
			}
		}
		return false, nil
	}
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

// kind is the one of the two kinds that gvk names; nil for any other.
func (g *gatewayKinds) kind(gvk schema.GroupVersionKind) *optionalKind {
	for _, k := range []*optionalKind{g.pool, g.route} {
		if k.gvk == gvk {
			return k
		}
	}
	return nil
}

// groupKind names a kind as the API server does in messages, e.g. InferencePool.inference.networking.k8s.io.
func groupKind(gvk schema.GroupVersionKind) string {
	return gvk.GroupKind().String()
}

// gone says whether one of the two kinds went away (its CRD deleted after its watch started);
// asked after a request about them failed.
func (g *gatewayKinds) gone() bool {
	pool, route := g.pool.Gone(g.mapper), g.route.Gone(g.mapper)
	return pool || route
}
