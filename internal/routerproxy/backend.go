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
	"time"

	"github.com/llmkube/operator/internal/routingdoc"
)

// backend is one resolved backend of the routing document, ready to send to.
type backend struct {
	name string
	// base is the URL every request path is appended to; trimV1 says whether the request path's
	// leading /v1 is dropped first (an external API base already ends in it).
	base   *url.URL
	trimV1 bool
	// modelJSON replaces the request's model when not nil (a JSON string).
	modelJSON []byte
	// authHeader and authValue are the backend's credential header, empty without credentials.
	authHeader, authValue string
	// missingKey names the environment variable a credentials Secret should have given.
	missingKey string

	health health
}

// newBackend prepares b. getenv reads the container's environment, where the operator's envFrom
// put the backend's credentials Secret.
func newBackend(b routingdoc.Backend, getenv func(string) string) (*backend, error) {
	u, err := url.Parse(b.URL)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", b.Name, err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	be := &backend{name: b.Name, base: u, trimV1: b.Kind == routingdoc.KindExternal}
	if b.Model != "" {
		be.modelJSON, _ = json.Marshal(b.Model)
	}
	if b.CredentialsEnvPrefix != "" {
		env := b.CredentialsEnvPrefix + routingdoc.CredentialsKey
		key := strings.TrimSpace(getenv(env))
		if key == "" {
			// Not fatal: the other backends still serve; this one's API answers 401 and the log says why.
			be.missingKey = env
			return be, nil
		}
		if b.Provider == routingdoc.ProviderAzureOpenAI {
			be.authHeader, be.authValue = "Api-Key", key
		} else {
			be.authHeader, be.authValue = "Authorization", "Bearer "+key
		}
	}
	return be, nil
}

// target is the upstream URL of a request to path with query.
//
// The rule: an InferenceService's URL has no path, so the whole request path is appended
// (http://svc:8080 + /v1/chat/completions); an external URL is an API base as OpenAI clients take
// it, so the request path after /v1 is appended (https://api.openai.com/v1 + /chat/completions).
// The base's own query (say Azure's api-version) is kept, the request's is added.
//
// Note: this is the one place that picks where an attempt goes; choosing among a backend's pods
// (load balancing) belongs here.
func (b *backend) target(path, query string) *url.URL {
	u := *b.base
	if b.trimV1 {
		path = strings.TrimPrefix(path, "/v1")
	}
	u.Path = b.base.Path + path
	switch {
	case u.RawQuery == "":
		u.RawQuery = query
	case query != "":
		u.RawQuery += "&" + query
	}
	return &u
}

// health is a backend's run of failures. After threshold failures in a row the backend cools
// down: requests skip it for a while unless it is their last option.
type health struct {
	fails atomic.Int32
	until atomic.Int64 // unix nanoseconds the cooldown ends
}

func (h *health) cooling(now time.Time) bool { return now.UnixNano() < h.until.Load() }

func (h *health) failed(now time.Time, threshold int, cooldown time.Duration) {
	if n := h.fails.Add(1); int(n) >= threshold {
		h.until.Store(now.Add(cooldown).UnixNano())
		h.fails.Store(0)
	}
}

func (h *health) succeeded() {
	if h.fails.Load() != 0 {
		h.fails.Store(0)
	}
}
