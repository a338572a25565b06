/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1

import (
	"strings"
	"testing"
)

func TestParseRefusesWhatItDoesNotUnderstand(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"backends":[]}`, `version "" is not supported`},
		{`{"version":"llmkube.dev/routing/v2","backends":[]}`, `version "llmkube.dev/routing/v2" is not supported: this proxy reads "llmkube.dev/routing/v1"`},
		{`{"version":"llmkube.dev/routing/v1","backends":[],"weights":{}}`, `unknown field "weights"`},
		{`{"version":"llmkube.dev/routing/v1","backends":[{"name":"a","kind":"pod","url":"http://a"}]}`, `unknown kind "pod"`},
		{`{"version":"llmkube.dev/routing/v1","backends":[{"name":"a","kind":"external","url":"ftp://a"}]}`, `not an absolute http(s) URL`},
		{`not json`, `not valid JSON`},
		{`{"version":"llmkube.dev/routing/v1","backends":[],"rules":[{"name":"r","models":["m"],"backend":"a","timeout":"soon"}]}`, `timeout "soon", not a positive duration`},
		{`{"version":"llmkube.dev/routing/v1","backends":[],"rules":[{"name":"r","models":["m"],"backend":"a","timeout":"0s"}]}`, `timeout "0s", not a positive duration`},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.doc, err, tc.want)
		}
	}
}

func TestRouteOrder(t *testing.T) {
	d := &Document{
		Rules: []Rule{
			{Name: "one", Models: []string{"gpt-4o"}, Backend: "a"},
			{Name: "two", Models: []string{"gpt-*"}, Backend: "b", Fallbacks: []string{"c"}},
			{Name: "all", Models: []string{"*"}, Backend: "d"},
		},
		DefaultRoute: "z",
	}
	for model, want := range map[string]string{"gpt-4o": "a", "gpt-4o-mini": "b,c", "gpt-": "b,c", "llama": "d", "": "d"} {
		m, ok := d.Route(model)
		if !ok || strings.Join(m.Backends, ",") != want {
			t.Errorf("%q: %v %+v, want %s", model, ok, m, want)
		}
	}
	d.Rules = d.Rules[:2]
	if m, _ := d.Route("llama"); m.Rule != -1 || m.Backends[0] != "z" {
		t.Errorf("default route: %+v", m)
	}
	d.DefaultRoute = ""
	if _, ok := d.Route("llama"); ok {
		t.Error("no match without a default route")
	}
}
