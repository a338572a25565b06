/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// unservedValue is a value of LLMKube's field f that the proxy does not serve: for an enum, the
// value this router does not route by (Proxy and Static are what it does).
func unservedValue(t *testing.T, f reflect.StructField) reflect.Value {
	switch f.Name {
	case "DataPlane":
		return reflect.ValueOf("Gateway")
	case "DefaultRouteStrategy":
		return reflect.ValueOf("BackendNameMatch")
	case "Tier":
		return reflect.ValueOf("local")
	}
	switch f.Type {
	case reflect.TypeFor[string]():
		return reflect.ValueOf("30s")
	case reflect.TypeFor[*apiextensionsv1.JSON]():
		return reflect.ValueOf(&apiextensionsv1.JSON{Raw: []byte(`{"x":1}`)})
	case reflect.TypeFor[[]string]():
		return reflect.ValueOf([]string{"code"})
	case reflect.TypeFor[*int32]():
		return reflect.ValueOf(ptr.To[int32](1))
	case reflect.TypeFor[bool]():
		return reflect.ValueOf(true)
	}
	t.Fatalf("LLMKube field %s has type %s: teach unservedValue a value of it", f.Name, f.Type)
	return reflect.Value{}
}

func jsonName(f reflect.StructField) string { return strings.Split(f.Tag.Get("json"), ",")[0] }

func baseRouter() *inferencev1alpha1.ModelRouter {
	return &inferencev1alpha1.ModelRouter{Spec: inferencev1alpha1.ModelRouterSpec{
		Backends: []inferencev1alpha1.Backend{{Name: "cloud", External: &inferencev1alpha1.ExternalBackend{Provider: "openai"}}},
		Rules:    []inferencev1alpha1.RoutingRule{{Name: "all", Models: []string{"*"}, Backend: "cloud"}},
	}}
}

// Every field of LLMKube's ModelRouter API that the proxy does not route by, set alone, blocks the
// plan and is named; generated from the Go types, so a field added to them without a line in
// UnservedFields fails here.
func TestEveryLLMKubeRouterFieldStalls(t *testing.T) {
	groups := []struct {
		path string
		typ  reflect.Type
		at   func(*inferencev1alpha1.ModelRouter) reflect.Value
	}{
		{"spec.", reflect.TypeFor[inferencev1alpha1.LLMKubeRouterFields](), func(r *inferencev1alpha1.ModelRouter) reflect.Value {
			return reflect.ValueOf(&r.Spec.LLMKubeRouterFields).Elem()
		}},
		{"spec.backends[cloud].", reflect.TypeFor[inferencev1alpha1.LLMKubeBackendFields](), func(r *inferencev1alpha1.ModelRouter) reflect.Value {
			return reflect.ValueOf(&r.Spec.Backends[0].LLMKubeBackendFields).Elem()
		}},
		{"spec.rules[all].", reflect.TypeFor[inferencev1alpha1.LLMKubeRuleFields](), func(r *inferencev1alpha1.ModelRouter) reflect.Value {
			return reflect.ValueOf(&r.Spec.Rules[0].LLMKubeRuleFields).Elem()
		}},
	}
	for _, g := range groups {
		for i := range g.typ.NumField() {
			f := g.typ.Field(i)
			name := g.path + jsonName(f)
			t.Run(name, func(t *testing.T) {
				r := baseRouter()
				g.at(r).Field(i).Set(unservedValue(t, f))
				got := UnservedFields(r)
				if len(got) != 1 || !strings.HasPrefix(got[0].Field, name) {
					t.Fatalf("UnservedFields with %s set = %v, want exactly that field", name, got)
				}
				p, err := PlanFor(&Observed{Router: r}, Flags{})
				if err != nil {
					t.Fatal(err)
				}
				if objs := p.Objects(); len(objs) != 0 {
					t.Fatalf("the plan with %s applies %d objects, want none", name, len(objs))
				}
			})
		}
	}
	proxy := map[string]func(*inferencev1alpha1.ProxySpec){
		"spec.proxy.resources.requests/limits": func(p *inferencev1alpha1.ProxySpec) {
			p.Resources = &inferencev1alpha1.ProxyResources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
		},
		"spec.proxy.quarantineDuration":    func(p *inferencev1alpha1.ProxySpec) { p.QuarantineDuration = ptr.To("30s") },
		"spec.proxy.responseHeaderTimeout": func(p *inferencev1alpha1.ProxySpec) { p.ResponseHeaderTimeout = ptr.To("30s") },
	}
	for name, set := range proxy {
		t.Run(name, func(t *testing.T) {
			r := baseRouter()
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{}
			set(r.Spec.Proxy)
			if got := UnservedFields(r); len(got) != 1 || got[0].Field != name {
				t.Fatalf("UnservedFields = %v, want %s", got, name)
			}
		})
	}
	for _, provider := range []string{"bedrock", "vertex_ai", "litellm"} {
		t.Run(provider, func(t *testing.T) {
			r := baseRouter()
			r.Spec.Backends[0].External = &inferencev1alpha1.ExternalBackend{Provider: provider, URL: "https://llm.example.com"}
			if got := UnservedFields(r); len(got) != 1 || !strings.Contains(got[0].Field, provider) {
				t.Fatalf("UnservedFields = %v, want the provider %s", got, provider)
			}
		})
	}
}

// What this router does anyway (LLMKube's dataPlane Proxy and defaultRouteStrategy Static) and
// this API's own fields block nothing.
func TestServedRouterFieldsDoNotStall(t *testing.T) {
	r := baseRouter()
	r.Spec.DataPlane, r.Spec.DefaultRouteStrategy = "Proxy", "Static"
	r.Spec.Proxy = &inferencev1alpha1.ProxySpec{Resources: &inferencev1alpha1.ProxyResources{Memory: ptr.To(resource.MustParse("512Mi"))}}
	if got := UnservedFields(r); len(got) != 0 {
		t.Fatalf("UnservedFields = %v, want none", got)
	}
	p, err := PlanFor(&Observed{Router: r}, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Objects()) == 0 {
		t.Fatal("a served router's plan applies nothing")
	}
}

// LLMKube's external URLs: none for its first-party providers, or a host without a path, are the
// API's host, so the proxy's base is its /v1; a URL with a path is this API's base as it is.
func TestExternalURL(t *testing.T) {
	for _, tc := range []struct{ provider, url, want string }{
		{"openai", "", "https://api.openai.com/v1"},
		{"anthropic", "", "https://api.anthropic.com/v1"},
		{"anthropic", "https://api.anthropic.com", "https://api.anthropic.com/v1"},
		{"openai-compatible", "http://llm.example.com:8000/", "http://llm.example.com:8000/v1"},
		{"openai", "https://api.example.com/v1", "https://api.example.com/v1"},
		{"azure-openai", "https://az.example.com/openai/v1?api-version=2024-10-21", "https://az.example.com/openai/v1?api-version=2024-10-21"},
	} {
		got, why := externalURL(&inferencev1alpha1.ExternalBackend{Provider: tc.provider, URL: tc.url})
		if got != tc.want || why != "" {
			t.Errorf("externalURL(%s, %q) = %q, %q; want %q", tc.provider, tc.url, got, why, tc.want)
		}
	}
	if _, why := externalURL(&inferencev1alpha1.ExternalBackend{Provider: "openai-compatible"}); why == "" {
		t.Error("openai-compatible without a URL resolves; want a message that asks for external.url")
	}
}
