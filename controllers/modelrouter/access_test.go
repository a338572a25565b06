/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// The proxy runs as its own ServiceAccount, whose Role reads endpointslices and nothing else.
func TestProxyIdentityIsLeastPrivilege(t *testing.T) {
	r := router(nil)
	if got := *Deployment(r, Inputs{}).Spec.Template.Spec.ServiceAccountName; got != "r-router-proxy" {
		t.Errorf("serviceAccountName %q", got)
	}
	role := Role(r)
	if len(role.Rules) != 1 {
		t.Fatalf("rules %+v", role.Rules)
	}
	rule := role.Rules[0]
	if diff := cmp.Diff([]string{"discovery.k8s.io"}, rule.APIGroups); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"endpointslices"}, rule.Resources); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"get", "list", "watch"}, rule.Verbs); diff != "" {
		t.Error(diff)
	}
	b := RoleBinding(r)
	if *b.RoleRef.Name != *role.Name || *b.Subjects[0].Name != *ServiceAccount(r).Name || *b.Subjects[0].Namespace != "ns" {
		t.Errorf("binding %+v", b)
	}
	for _, refs := range [][]string{{*ServiceAccount(r).OwnerReferences[0].Name}, {*role.OwnerReferences[0].Name}, {*b.OwnerReferences[0].Name}} {
		if refs[0] != "r" {
			t.Errorf("owner %v", refs)
		}
	}
}

// The document tells the proxy which Service's EndpointSlices to watch, and how to balance.
func TestDocumentCarriesServiceAndBalancing(t *testing.T) {
	r := router(func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Proxy = &inferencev1alpha1.ProxySpec{Balancing: ptr.To(inferencev1alpha1.BalancingPrefixAffinity)}
	})
	doc := Document(r, Resolve(r, allFound()))
	if doc.Balancing != routingv1.BalancingPrefixAffinity {
		t.Errorf("balancing %q", doc.Balancing)
	}
	for _, b := range doc.Backends {
		switch b.Name {
		case "local":
			if diff := cmp.Diff(&routingv1.Service{Namespace: "ns", Name: "llama", Port: "http"}, b.Service); diff != "" {
				t.Error(diff)
			}
		case "cloud":
			if b.Service != nil {
				t.Errorf("an external backend has no Service: %+v", b.Service)
			}
		}
	}
	if d := Document(router(nil), Resolve(router(nil), allFound())); d.Balancing != "" {
		t.Errorf("unset balancing is written as empty (LeastRequest): %q", d.Balancing)
	}
}
