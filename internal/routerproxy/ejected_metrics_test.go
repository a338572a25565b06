/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

func TestEjectedPodsAreCountedAtScrapeTime(t *testing.T) {
	doc := &routingv1.Document{Backends: []routingv1.Backend{{Name: "llama", Kind: routingv1.KindInferenceService,
		Service: &routingv1.Service{Namespace: "ns", Name: "llama", Port: "http"}}}}
	reg := prometheus.NewPedanticRegistry()
	b := NewBalancer(doc, BalancerOptions{FailureThreshold: 1, Cooldown: time.Hour, Registerer: reg})
	pool := b.state.Load().pools["llama"]
	pool.Update([]string{"10.0.0.1:8080", "10.0.0.2:8080"})
	for _, e := range pool.Endpoints() {
		pool.Failed(e, time.Now())
	}
	if n := testutil.ToFloat64(ejectedCollector{b}); n != 2 {
		t.Fatalf("llmkube_router_backend_pods_ejected = %v, want 2 (both pods failed past the threshold)", n)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// A PrefixAffinity backend's hit and miss series are
// served at 0 as soon as its document loads; a LeastRequest router serves none.
func TestPrefixBlocksAreZeroFilledForPrefixAffinity(t *testing.T) {
	for _, policy := range []string{routingv1.BalancingPrefixAffinity, routingv1.BalancingLeastRequest} {
		doc := &routingv1.Document{Balancing: policy, Backends: []routingv1.Backend{{Name: "llama", Kind: routingv1.KindInferenceService,
			Service: &routingv1.Service{Namespace: "ns", Name: "llama", Port: "http"}}}}
		reg := prometheus.NewPedanticRegistry()
		b := NewBalancer(doc, BalancerOptions{Registerer: reg})
		want := 0
		if policy == routingv1.BalancingPrefixAffinity {
			want = 2
		}
		if n := testutil.CollectAndCount(b.prefixBlocks, "llmkube_router_prefix_blocks_total"); n != want {
			t.Errorf("%s: llmkube_router_prefix_blocks_total has %d series before any request, want %d (hit and miss for a PrefixAffinity backend)", policy, n, want)
		}
	}
}
