/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package endpoints keeps each InferenceService backend's pool of pods (internal/routerproxy/
// balance) equal to the ready endpoints of its Service, from a watch of EndpointSlices
// (kubernetes.io/service-name=<service>) in the Service's namespace.
package endpoints

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// Target is one backend's Service and the pool it feeds.
type Target struct {
	Backend   string
	Namespace string
	Service   string
	// Port is the name of the EndpointSlice port requests go to.
	Port string
	Pool *balance.Pool
}

// Reasons a backend sends to its Service URL instead of choosing a pod.
const (
	ReasonNotSynced   = "not_synced"
	ReasonForbidden   = "forbidden"
	ReasonNoEndpoints = "no_ready_endpoints"
	ReasonNoAPI       = "no_api"
)

// Watcher runs one informer per namespace of its Targets, restricted by label selector to their
// Services' EndpointSlices.
type Watcher struct {
	Client  kubernetes.Interface
	Targets []Target
	// Report is called whenever a backend's pod count or fallback reason may have changed: pods
	// is the pool's size, reason is empty when the backend balances over its pods.
	Report func(backend string, pods int, reason string)

	mu        sync.Mutex
	forbidden map[string]bool // by namespace
}

// Run watches until ctx ends. It returns once every informer has synced or syncTimeout passed
// (a proxy without permission keeps serving through the Service URLs), and keeps watching in
// the background.
func (w *Watcher) Run(ctx context.Context, syncTimeout time.Duration) {
	w.forbidden = map[string]bool{}
	byNS := map[string][]Target{}
	for _, t := range w.Targets {
		byNS[t.Namespace] = append(byNS[t.Namespace], t)
		w.Report(t.Backend, 0, ReasonNotSynced)
	}
	var synced []cache.InformerSynced
	for ns, targets := range byNS {
		inf := w.informer(ctx, ns, targets)
		synced = append(synced, inf.HasSynced)
		go inf.RunWithContext(ctx)
	}
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	cache.WaitForCacheSync(sctx.Done(), synced...)
}

func (w *Watcher) informer(ctx context.Context, ns string, targets []Target) cache.SharedIndexInformer {
	names := make([]string, 0, len(targets))
	for _, t := range targets {
		names = append(names, t.Service)
	}
	slices.Sort(names)
	selector := fmt.Sprintf("%s in (%s)", discoveryv1.LabelServiceName, strings.Join(slices.Compact(names), ","))
	factory := informers.NewSharedInformerFactoryWithOptions(w.Client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := factory.Discovery().V1().EndpointSlices().Informer()
	store := inf.GetStore()
	update := func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !inf.HasSynced() {
			return
		}
		w.forbidden[ns] = false
		w.refresh(store, targets)
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { update() },
		UpdateFunc: func(any, any) { update() },
		DeleteFunc: func(any) { update() },
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		cache.DefaultWatchErrorHandler(ctx, r, err)
		if !apierrors.IsForbidden(err) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.forbidden[ns] {
			return
		}
		w.forbidden[ns] = true
		for _, t := range targets {
			if t.Pool.Len() == 0 {
				w.Report(t.Backend, 0, ReasonForbidden)
			}
		}
	})
	// The first list's adds arrive before HasSynced turns true; this catches an empty namespace
	// (no event at all) and the last add.
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			update()
		}
	}()
	return inf
}

// refresh sets each target's pool to the ready endpoints of its Service's slices in store.
func (w *Watcher) refresh(store cache.Store, targets []Target) {
	slicesBySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, o := range store.List() {
		s, ok := o.(*discoveryv1.EndpointSlice)
		if !ok {
			continue
		}
		svc := s.Labels[discoveryv1.LabelServiceName]
		slicesBySvc[svc] = append(slicesBySvc[svc], s)
	}
	for _, t := range targets {
		addrs := ReadyAddresses(slicesBySvc[t.Service], t.Port)
		t.Pool.Update(addrs)
		reason := ""
		if len(addrs) == 0 {
			reason = ReasonNoEndpoints
		}
		w.Report(t.Backend, len(addrs), reason)
	}
}

// ReadyAddresses are host:port of every ready endpoint in slices, on the port named port, one per
// pod. Ready unset counts as ready (the API says consumers should), terminating endpoints are not
// ready, and FQDN slices are skipped (their addresses are not pod IPs).
//
// Note: a dual-stack Service has an IPv4 and an IPv6 slice naming the same pods; a pod is one
// endpoint (else least request and the affinity bound count it twice). A pod is known by its
// targetRef; the IPv4 address is kept (slices are read IPv4 first, then by name). An endpoint
// without a targetRef is known by its address.
func ReadyAddresses(in []*discoveryv1.EndpointSlice, port string) []string {
	ordered := slices.Clone(in)
	slices.SortStableFunc(ordered, func(a, b *discoveryv1.EndpointSlice) int {
		if c := strings.Compare(string(a.AddressType), string(b.AddressType)); c != 0 {
			return c // "IPv4" < "IPv6"
		}
		return strings.Compare(a.Name, b.Name)
	})
	var out []string
	seen := map[string]bool{}
	for _, s := range ordered {
		if s.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		var num int32
		for _, p := range s.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == port && p.Port != nil {
				num = *p.Port
			}
		}
		if num == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			if e.Conditions.Terminating != nil && *e.Conditions.Terminating {
				continue
			}
			if len(e.Addresses) == 0 {
				continue
			}
			pod := e.Addresses[0] // the API: consumers use the first address
			if r := e.TargetRef; r != nil && r.Name != "" {
				pod = r.Kind + "/" + r.Namespace + "/" + r.Name
			}
			if seen[pod] {
				continue
			}
			seen[pod] = true
			out = append(out, net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(num))))
		}
	}
	return out
}
