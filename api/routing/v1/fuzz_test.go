/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1

import (
	"strings"
	"testing"
)

// FuzzParseAndRoute: any bytes either fail to parse or give a document whose bytes parse again
// to the same routing, and routing any model never panics and only ever names the backends the
// document names; MatchModel agrees with its definition.
func FuzzParseAndRoute(f *testing.F) {
	f.Add([]byte(`{"version":"llmkube.dev/routing/v1","backends":[{"name":"a","kind":"external","url":"https://x/v1"}],"rules":[{"name":"r","models":["gpt-*","m"],"backend":"a","fallbacks":["b"]}],"defaultRoute":"a"}`), "gpt-4o")
	f.Add([]byte(`{"version":"v2"}`), "m")
	f.Add([]byte(`{"version":"llmkube.dev/routing/v1","backends":[],"extra":1}`), "*")
	f.Fuzz(func(t *testing.T, data []byte, model string) {
		d, err := Parse(data)
		if err != nil {
			return
		}
		again, err := Marshal(*d)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := Parse(again)
		if err != nil {
			t.Fatalf("a parsed document does not parse again: %v\n%s", err, again)
		}
		m, ok := d.Route(model)
		m2, ok2 := d2.Route(model)
		if ok != ok2 || m.Rule != m2.Rule || m.Pattern != m2.Pattern || strings.Join(m.Backends, ",") != strings.Join(m2.Backends, ",") {
			t.Fatalf("routing changed through a round trip: %+v %+v", m, m2)
		}
		if !ok {
			if d.DefaultRoute != "" {
				t.Fatal("no match despite a default route")
			}
			return
		}
		if m.Rule >= 0 {
			r := d.Rules[m.Rule]
			if !MatchModel(m.Pattern, model) || m.Backends[0] != r.Backend {
				t.Fatalf("match %+v for %q", m, model)
			}
			for _, earlier := range d.Rules[:m.Rule] {
				for _, p := range earlier.Models {
					if MatchModel(p, model) {
						t.Fatalf("an earlier rule matches %q too", model)
					}
				}
			}
		} else if m.Backends[0] != d.DefaultRoute {
			t.Fatalf("default route %+v", m)
		}
		if prefix, wild := strings.CutSuffix(m.Pattern, "*"); wild && !strings.HasPrefix(model, prefix) || !wild && m.Rule >= 0 && m.Pattern != model {
			t.Fatalf("pattern %q does not match %q by definition", m.Pattern, model)
		}
	})
}
