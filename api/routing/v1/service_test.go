/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1

import (
	"strings"
	"testing"
)

// A document written before backends carried their Service still reads (the fields are optional),
// and one that carries them round-trips.
func TestServiceAndBalancingAreOptionalAndRoundTrip(t *testing.T) {
	old := `{"version":"llmkube.dev/routing/v1","backends":[{"name":"a","kind":"inferenceService","url":"http://a.ns.svc.cluster.local:8080"}]}`
	d, err := Parse([]byte(old))
	if err != nil || d.Backends[0].Service != nil || d.Balancing != "" {
		t.Fatalf("a document without service and balancing: %v %+v", err, d)
	}
	d.Balancing = BalancingPrefixAffinity
	d.Backends[0].Service = &Service{Namespace: "ns", Name: "a", Port: "http"}
	data, err := Marshal(*d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil || *back.Backends[0].Service != *d.Backends[0].Service || back.Balancing != BalancingPrefixAffinity {
		t.Fatalf("round trip: %v %s", err, data)
	}
}

func TestServiceAndBalancingAreChecked(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"version":"llmkube.dev/routing/v1","backends":[],"balancing":"Random"}`, `unknown balancing "Random"`},
		{`{"version":"llmkube.dev/routing/v1","backends":[{"name":"a","kind":"inferenceService","url":"http://a","service":{"namespace":"ns","name":"a"}}]}`, `service without namespace, name or port`},
	} {
		if _, err := Parse([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.doc, err, tc.want)
		}
	}
}
