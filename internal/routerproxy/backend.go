/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// backend is one resolved backend of the routing document, ready to send to.
type backend struct {
	name string
	// def is what the document said: a reload keeps a backend (and its health) when it is equal.
	def routingv1.Backend
	// external says the backend is outside the cluster: only allowlisted headers cross
	// (headers.go).
	external bool
	// base is the URL every request path is appended to; trimV1 says whether the request path's
	// leading /v1 is dropped first (an external API base already ends in it).
	base   *url.URL
	trimV1 bool
	// modelJSON replaces the request's model when not nil (a JSON string).
	modelJSON []byte
	// creds are the backend's credentials (credentials.go); credErr the last failure to reread
	// them, said once.
	creds   atomic.Pointer[credentials]
	credErr string

	// health is the backend's own, for attempts that go to its URL (an external API, or a
	// Service without pods to choose); a pod's is its Endpoint's.
	health balance.Health
}

// newBackend prepares b, without credentials (Proxy.prepare adds them).
func newBackend(b routingv1.Backend) (*backend, error) {
	u, err := url.Parse(b.URL)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", b.Name, err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	be := &backend{name: b.Name, def: b, base: u, trimV1: b.Kind == routingv1.KindExternal, external: b.Kind == routingv1.KindExternal}
	if b.Model != "" {
		be.modelJSON, _ = json.Marshal(b.Model)
	}
	be.creds.Store(&credentials{})
	return be, nil
}

// target is the upstream URL of a request to path with query.
//
// The rule: an InferenceService's URL has no path, so the whole request path is appended
// (http://svc:8080 + /v1/chat/completions); an external URL is an API base as OpenAI clients take
// it, so the request path after /v1 is appended (https://api.openai.com/v1 + /chat/completions);
// a path outside /v1 (vLLM's /tokenize, Cohere's /v2/rerank) goes beside the base, which loses
// its trailing /v1 (http://vllm:8000/v1 -> http://vllm:8000/tokenize).
// The base's own query (say Azure's api-version) is kept. The client's query goes to an
// InferenceService only: an external API gets the base's query and nothing else.
//
// Note: the query is the header allowlist's twin. A provider's query parameters select what
// the operator's key pays for (Azure's api-version, a deployment, a region), and the OpenAI API
// takes none on the paths the proxy serves, so no client parameter crosses; a duplicated
// api-version would otherwise pick one of two versions by the provider's parser's whim. An
// InferenceService is the operator's own server, sent every client header as well: its query
// (a server's own option, such as a debug flag) passes as the client wrote it.
//
// Note: this is the one place that picks where an attempt goes; choosing among a backend's pods
// (load balancing) belongs here.
func (b *backend) target(path, query string) *url.URL {
	u := *b.base
	base := b.base.Path
	if b.trimV1 {
		if rest, ok := strings.CutPrefix(path, "/v1/"); ok {
			path = "/" + rest
		} else {
			base = strings.TrimSuffix(base, "/v1") // /tokenize, /v2/rerank: beside the API base, not under it
		}
	}
	u.Path = base + path
	if b.external {
		return &u
	}
	switch {
	case u.RawQuery == "":
		u.RawQuery = query
	case query != "":
		u.RawQuery += "&" + query
	}
	return &u
}
