/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

func conds(gen int64, accepted, resolved metav1.ConditionStatus, reason string) []metav1.Condition {
	return []metav1.Condition{
		{Type: "Accepted", Status: accepted, Reason: reason, ObservedGeneration: gen},
		{Type: "ResolvedRefs", Status: resolved, Reason: reason, ObservedGeneration: gen},
	}
}

func routeWith(gen int64, parents ...gatewayv1.RouteParentStatus) *gatewayv1.HTTPRoute {
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
	r.Status.Parents = parents
	return r
}

func poolWith(gen int64, parents ...inferencepoolv1.ParentStatus) *inferencepoolv1.InferencePool {
	p := &inferencepoolv1.InferencePool{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
	p.Status.Parents = parents
	return p
}

func routeParent(name string, section *string, c []metav1.Condition) gatewayv1.RouteParentStatus {
	ref := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
	if section != nil {
		ref.SectionName = ptr.To(gatewayv1.SectionName(*section))
	}
	return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gw", Conditions: c}
}

func poolParent(name, namespace string, c []metav1.Condition) inferencepoolv1.ParentStatus {
	return inferencepoolv1.ParentStatus{ParentRef: inferencepoolv1.ParentReference{Kind: "Gateway", Name: inferencepoolv1.ObjectName(name),
		Namespace: inferencepoolv1.Namespace(namespace)}, Conditions: c}
}

func TestGatewayCondition(t *testing.T) {
	isvc := spec(func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.Gateway = &inferencev1alpha1.GatewaySpec{ParentRefs: []inferencev1alpha1.GatewayParentReference{
			{Name: "a"}, {Name: "b", SectionName: ptr.To("https")},
		}}
	})
	ok := func(gen int64) []metav1.Condition { return conds(gen, "True", "True", "Accepted") }
	bothRoutes := func(gen int64, a, b []metav1.Condition) *gatewayv1.HTTPRoute {
		return routeWith(gen, routeParent("a", nil, a), routeParent("b", ptr.To("https"), b))
	}
	bothPools := func(gen int64, a, b []metav1.Condition) *inferencepoolv1.InferencePool {
		return poolWith(gen, poolParent("a", "", a), poolParent("b", "ns", b))
	}
	for _, tc := range []struct {
		name       string
		route      *gatewayv1.HTTPRoute
		pool       *inferencepoolv1.InferencePool
		status     metav1.ConditionStatus
		reason     string
		messageHas []string
	}{
		{name: "nothing created yet", status: "Unknown", reason: ReasonGatewayPending, messageHas: []string{"waiting for Gateway ns/a to report on HTTPRoute ns/foo"}},
		{name: "every parent accepted and resolved", route: bothRoutes(2, ok(2), ok(2)), pool: bothPools(1, ok(1), ok(1)),
			status: "True", reason: ReasonGatewayAccepted},
		{name: "one Gateway has not reported on the pool", route: bothRoutes(2, ok(2), ok(2)), pool: poolWith(1, poolParent("a", "", ok(1))),
			status: "Unknown", reason: ReasonGatewayPending, messageHas: []string{"Gateway ns/b (listener https)", "InferencePool ns/foo"}},
		{name: "a listener the spec does not name does not count", route: routeWith(2, routeParent("a", nil, ok(2)), routeParent("b", nil, ok(2))), pool: bothPools(1, ok(1), ok(1)),
			status: "Unknown", reason: ReasonGatewayPending, messageHas: []string{"HTTPRoute ns/foo"}},
		{name: "a report on an older generation is stale", route: bothRoutes(3, ok(2), ok(3)), pool: bothPools(1, ok(1), ok(1)),
			status: "Unknown", reason: ReasonGatewayPending, messageHas: []string{"generation 3", "it reported on 2"}},
		{name: "a refusal wins over pending", route: bothRoutes(2, nil, ok(2)), pool: bothPools(1, ok(1), conds(1, "False", "True", "NotSupportedByParent")),
			status: "False", reason: "NotSupportedByParent", messageHas: []string{"Gateway ns/b (listener https) refused InferencePool ns/foo: Accepted=False (NotSupportedByParent)"}},
		{name: "an unresolved endpoint picker", route: bothRoutes(2, ok(2), ok(2)), pool: bothPools(1, conds(1, "True", "False", "InvalidExtensionRef"), ok(1)),
			status: "False", reason: "InvalidExtensionRef", messageHas: []string{"ResolvedRefs=False (InvalidExtensionRef)"}},
		{name: "Unknown from the Gateway stays Unknown", route: bothRoutes(2, conds(2, "Unknown", "Unknown", "Pending"), ok(2)), pool: bothPools(1, ok(1), ok(1)),
			status: "Unknown", reason: ReasonGatewayPending, messageHas: []string{"Accepted=Unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gatewayCondition(isvc, tc.route, tc.pool)
			if c.Type != inferencev1alpha1.ConditionGatewayReady || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("got %s=%s (%s): %s, want %s (%s)", c.Type, c.Status, c.Reason, c.Message, tc.status, tc.reason)
			}
			for _, s := range tc.messageHas {
				if !strings.Contains(c.Message, s) {
					t.Errorf("message %q lacks %q", c.Message, s)
				}
			}
		})
	}
}

func TestGatewayObjectsWithoutGateway(t *testing.T) {
	if InferencePool(spec(nil)) != nil || HTTPRoute(spec(nil)) != nil {
		t.Fatal("no spec.gateway: no pool, no route")
	}
}

func TestCRDNotInstalledNamesTheKinds(t *testing.T) {
	c := crdNotInstalled([]schema.GroupVersionKind{InferencePoolKind})
	if c.Status != metav1.ConditionFalse || c.Reason != ReasonCRDNotInstalled || !strings.Contains(c.Message, "InferencePool.inference.networking.k8s.io") {
		t.Fatalf("%+v", c)
	}
}
