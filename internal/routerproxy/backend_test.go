/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"testing"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Proves R28: an external API gets its base URL's query only, an InferenceService the client's.
func TestTargetURLRule(t *testing.T) {
	for _, tc := range []struct {
		kind, url, path, query, want string
	}{
		{routingv1.KindInferenceService, "http://llama.ns.svc.cluster.local:8080", "/v1/chat/completions", "", "http://llama.ns.svc.cluster.local:8080/v1/chat/completions"},
		{routingv1.KindExternal, "https://api.openai.com/v1", "/v1/chat/completions", "", "https://api.openai.com/v1/chat/completions"},
		{routingv1.KindExternal, "https://api.openai.com/v1/", "/v1/embeddings", "", "https://api.openai.com/v1/embeddings"},
		{routingv1.KindExternal, "https://api.anthropic.com/v1", "/v1/chat/completions", "a=1", "https://api.anthropic.com/v1/chat/completions"},
		{routingv1.KindExternal, "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "/v1/chat/completions", "api-version=2099-01-01&a=1",
			"https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"},
		{routingv1.KindInferenceService, "http://llama.ns.svc.cluster.local:8080", "/v1/chat/completions", "debug=1&a=%20", "http://llama.ns.svc.cluster.local:8080/v1/chat/completions?debug=1&a=%20"},
		{routingv1.KindExternal, "http://vllm.example:8000/v1", "/tokenize", "", "http://vllm.example:8000/tokenize"},
		{routingv1.KindExternal, "https://api.cohere.com/v1/", "/v2/rerank", "", "https://api.cohere.com/v2/rerank"},
		{routingv1.KindInferenceService, "http://llama.ns.svc.cluster.local:8080", "/rerank", "", "http://llama.ns.svc.cluster.local:8080/rerank"},
	} {
		b, err := newBackend(routingv1.Backend{Name: "b", Kind: tc.kind, URL: tc.url})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.target(tc.path, tc.query).String(); got != tc.want {
			t.Errorf("%s %s + %s: got %s want %s", tc.kind, tc.url, tc.path, got, tc.want)
		}
	}
}

func TestCredentialsHeaderByProvider(t *testing.T) {
	env := map[string]string{"BACKEND_AZ_API_KEY": "k1\n", "BACKEND_OAI_API_KEY": "k2"}
	p := &Proxy{o: Options{Getenv: func(k string) string { return env[k] }}}
	az, _ := p.credentialsOf(routingv1.Backend{Name: "az", Provider: routingv1.ProviderAzureOpenAI, CredentialsEnvPrefix: "BACKEND_AZ_"})
	oai, _ := p.credentialsOf(routingv1.Backend{Name: "oai", Provider: routingv1.ProviderAnthropic, CredentialsEnvPrefix: "BACKEND_OAI_"})
	none, _ := p.credentialsOf(routingv1.Backend{Name: "none", CredentialsEnvPrefix: "BACKEND_NONE_"})
	if az.header != "Api-Key" || az.value != "k1" {
		t.Errorf("azure: %s %s", az.header, az.value)
	}
	if oai.header != "Authorization" || oai.value != "Bearer k2" {
		t.Errorf("anthropic: %s %s", oai.header, oai.value)
	}
	if none.header != "" || none.missing != "BACKEND_NONE_API_KEY" {
		t.Errorf("missing key: %+v", none)
	}
}
