/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package endpoints

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestReadyAddresses(t *testing.T) {
	ports := []discoveryv1.EndpointPort{{Name: ptr.To("metrics"), Port: ptr.To[int32](9090)}, {Name: ptr.To("http"), Port: ptr.To[int32](8000)}}
	slices := []*discoveryv1.EndpointSlice{
		{
			AddressType: discoveryv1.AddressTypeIPv4, Ports: ports,
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.0.0.1", "10.0.0.99"}},                                                     // ready unset: ready; first address only
				{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}, // ready
				{Addresses: []string{"10.0.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
				{Addresses: []string{"10.0.0.4"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Terminating: ptr.To(true)}},
			},
		},
		{AddressType: discoveryv1.AddressTypeIPv6, Ports: ports, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"fd00::5"}}}},
		{AddressType: discoveryv1.AddressTypeFQDN, Ports: ports, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"pod.example"}}}},
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: ports[:1], Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.6"}}}}, // no http port
	}
	want := []string{"10.0.0.1:8000", "10.0.0.2:8000", "[fd00::5]:8000"}
	if diff := cmp.Diff(want, ReadyAddresses(slices, "http")); diff != "" {
		t.Error(diff)
	}
}

// A dual-stack Service has an IPv4 and an IPv6 slice naming the same pods: each pod is one
// endpoint, at its IPv4 address, whatever order the slices come in.
func TestReadyAddressesDualStack(t *testing.T) {
	ports := []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8000)}}
	pod := func(name, addr string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{addr}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: name}}
	}
	in := []*discoveryv1.EndpointSlice{
		{ObjectMeta: metav1.ObjectMeta{Name: "svc-v6"}, AddressType: discoveryv1.AddressTypeIPv6, Ports: ports, Endpoints: []discoveryv1.Endpoint{pod("a", "fd00::1"), pod("b", "fd00::2")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "svc-v4"}, AddressType: discoveryv1.AddressTypeIPv4, Ports: ports, Endpoints: []discoveryv1.Endpoint{pod("a", "10.0.0.1"), pod("b", "10.0.0.2")}},
	}
	if diff := cmp.Diff([]string{"10.0.0.1:8000", "10.0.0.2:8000"}, ReadyAddresses(in, "http")); diff != "" {
		t.Error(diff)
	}
}
