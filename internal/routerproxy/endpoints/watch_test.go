/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package endpoints

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
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
