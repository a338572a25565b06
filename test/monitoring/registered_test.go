/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package monitoring

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/internal/routerproxy"
)

// describing is a Registerer that remembers the descriptors of what is registered with it, so a
// metric family counts as registered even before its first series exists.
type describing struct {
	prometheus.Registerer
	names map[string][]string // metric name -> its variable labels
}

func newDescribing() *describing {
	return &describing{Registerer: prometheus.NewRegistry(), names: map[string][]string{}}
}

var (
	fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)
	labelsRE = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

func (d *describing) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		// Note: Desc keeps its name private; its String() is the only way to it.
		s := desc.String()
		m := fqNameRE.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		var labels []string
		if l := labelsRE.FindStringSubmatch(s); l != nil && l[1] != "" {
			labels = strings.Split(l[1], ",")
		}
		d.names[m[1]] = labels
	}
	return d.Registerer.Register(c)
}

func (d *describing) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := d.Register(c); err != nil {
			panic(err)
		}
	}
}

// operatorMetrics are the metric families the operator's /metrics serves: its own (registered as
// controllers.Setup does) and controller-runtime's in its registry, once a controller has started
// (controller-runtime creates a controller's series then).
func operatorMetrics(t *testing.T) map[string]bool {
	t.Helper()
	own := newDescribing()
	if err := controllers.RegisterMetrics(own, nil); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for n := range own.names {
		names[n] = true
	}
	// controller-runtime registers its leader-election families at init, and they have series
	// only on a leader. Registering a family of the same name again is refused exactly when one
	// is registered, which says it is.
	for _, n := range []string{"leader_election_master_status"} {
		probe := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: n, Help: "probe"}, []string{"name"})
		if err := crmetrics.Registry.Register(probe); err != nil {
			names[n] = true
		} else {
			crmetrics.Registry.Unregister(probe)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	skip := true
	c, err := controller.NewUnmanaged("inferenceservice", controller.Options{SkipNameValidation: &skip,
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			// A reconcile takes time, as the operator's do: a gather that races ahead of the
			// observation of its duration then fails every run, not once in a while.
			time.Sleep(200 * time.Millisecond)
			return reconcile.Result{}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	// One item through the queue: the depth gauge has a series once something was queued.
	events := make(chan event.GenericEvent, 1)
	events <- event.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}}}
	if err := c.Watch(source.Channel(events, &handler.EnqueueRequestForObject{})); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		families, err := crmetrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, f := range families {
			got[f.GetName()] = true
		}
		if reconciled(got) {
			for n := range got {
				names[n] = true
			}
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("controller-runtime's %v did not all appear in its registry within 30s", afterOneReconcile)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// afterOneReconcile are the families controller-runtime has a series of once one item went through
// the queue and its reconcile returned. reconcile_total has series from the controller's start, but
// reconcile_time_seconds only after the reconcile's duration is observed, which happens after the
// reconciler returns: waiting on reconcile_total alone gathered too early once under CI load.
var afterOneReconcile = []string{"workqueue_depth", "controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds"}

func reconciled(got map[string]bool) bool {
	for _, n := range afterOneReconcile {
		if !got[n] {
			return false
		}
	}
	return true
}

// proxyMetrics are the metric families the router-proxy registers, wired as cmd/router-proxy
// wires them (Go's runtime and process collectors, a balancer and the proxy, on one registry). The
// Go collector's families are gathered, not described: its default set (go_memstats_*,
// go_gc_gomemlimit_bytes, ...) is what a scrape of the proxy serves.
func proxyMetrics(t *testing.T) map[string]bool {
	t.Helper()
	reg := newDescribing()
	registerProxy(t, reg)
	names := map[string]bool{}
	for n := range reg.names {
		names[n] = true
	}
	goRuntime := prometheus.NewRegistry()
	goRuntime.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	families, err := goRuntime.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names[f.GetName()] = true
	}
	return names
}

func registerProxy(t *testing.T, reg *describing) {
	t.Helper()
	doc := &routingv1.Document{Backends: []routingv1.Backend{{Name: "llama", Kind: routingv1.KindInferenceService,
		URL: "http://llama.ns.svc:8080", Service: &routingv1.Service{Namespace: "ns", Name: "llama", Port: "http"}}}}
	balancer := routerproxy.NewBalancer(doc, routerproxy.BalancerOptions{Registerer: reg})
	proxy, err := routerproxy.New(routerproxy.Options{Document: doc, Registerer: reg, Balancer: balancer})
	if err != nil {
		t.Fatal(err)
	}
	// The watcher of the mounted routing document, as cmd/router-proxy starts it: its reload
	// metrics are what tells a router serving an old document.
	routerproxy.NewDocumentWatcher("routing.json", nil, time.Second, proxy, reg, slog.New(slog.DiscardHandler))
}
