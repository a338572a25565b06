/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package v1 is the routing document a ModelRouter's proxy reads: the operator writes it
// into the router's ConfigMap (controllers/modelrouter) and the proxy reads it
// (internal/routerproxy). It is the only thing the two share, so they cannot drift: a field added
// here is added for both, and a proxy refuses a document version it does not know.
package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Version is the version of the document this code writes and reads. Change it when a change is
// not backward compatible for a proxy that reads it: an older proxy then refuses to start with a
// clear error instead of routing by rules it misunderstands.
const Version = "llmkube.dev/routing/v1"

// Backend kinds. The kind decides how the proxy builds the upstream URL (see Backend.URL).
const (
	KindInferenceService = "inferenceService"
	KindExternal         = "external"
)

// Providers of external backends, as the ModelRouter API names them.
const (
	ProviderOpenAI           = "openai"
	ProviderAnthropic        = "anthropic"
	ProviderAzureOpenAI      = "azure-openai"
	ProviderOpenAICompatible = "openai-compatible"
)

// CredentialsKey is the key of a backend's credentials Secret that holds its API key: a file of
// that name in the backend's credentials directory.
const CredentialsKey = "API_KEY"

// MaxFallbacks bounds a rule's fallbacks (the API's admission says the same).
const MaxFallbacks = 8

// Document is the routing document. Backends lists only the backends that resolved; a rule, a
// fallback or the default route naming a backend that is not listed is unavailable.
type Document struct {
	Version      string    `json:"version"`
	Backends     []Backend `json:"backends"`
	Rules        []Rule    `json:"rules,omitempty"`
	DefaultRoute string    `json:"defaultRoute,omitempty"`
	// Balancing is how the proxy chooses among the pods of a backend with a Service:
	// BalancingLeastRequest (also when empty), BalancingPrefixAffinity or BalancingEngineAware.
	Balancing string `json:"balancing,omitempty"`
	// Engine is set exactly when Balancing is BalancingEngineAware (engine.go).
	Engine *EngineScoring `json:"engine,omitempty"`
	// Clients and Limits are the named clients and where their limits are counted (limits.go).
	Clients []Client     `json:"clients,omitempty"`
	Limits  *LimitsStore `json:"limits,omitempty"`
}

// Balancing policies, as spec.proxy.balancing names them.
const (
	BalancingLeastRequest   = "LeastRequest"
	BalancingPrefixAffinity = "PrefixAffinity"
)

// Service is the Kubernetes Service in front of an InferenceService's pods: the proxy watches its
// EndpointSlices (label kubernetes.io/service-name=Name in Namespace) and sends to the ready
// endpoints' addresses on the port named Port.
type Service struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Port is the name of the Service port (and of the EndpointSlice port) requests go to.
	Port string `json:"port"`
}

// Backend is one resolved backend.
type Backend struct {
	Name string `json:"name"`
	// Kind is KindInferenceService or KindExternal.
	Kind string `json:"kind"`
	// URL is, for an InferenceService, its Service URL without a path (the request's whole path is
	// appended); for an external backend, an API base as OpenAI clients take it
	// (https://api.openai.com/v1: the request's path after /v1 is appended).
	URL      string `json:"url"`
	Provider string `json:"provider,omitempty"`
	// Model replaces the request's model when set.
	Model string `json:"model,omitempty"`
	// Credentials says the backend has a credentials Secret: the operator mounts its keys in the
	// directory named after the backend under the proxy's --credentials-dir, which the proxy
	// rereads (so a rotated key needs no restart).
	Credentials bool `json:"credentials,omitempty"`
	// CredentialsEnvPrefix is what operators before Credentials wrote: the prefix of the
	// environment variables holding the Secret's keys (envFrom). Still read, so that a proxy
	// meeting such a document serves it; never written.
	CredentialsEnvPrefix string `json:"credentialsEnvPrefix,omitempty"`
	// Service, for an InferenceService, lets the proxy choose the pod itself; URL stays the
	// fallback when the endpoints cannot be read or none is ready. Optional, so a document
	// written without it still reads: the proxy then sends to URL only.
	Service *Service `json:"service,omitempty"`
	// StreamUsage makes the proxy ask this backend for the usage of a chat or completions stream
	// whose client did not (stream_options.include_usage) and keep the usage-only chunk from the
	// client. The operator decides it (spec.backends[].streamUsage, and for Auto whether the
	// backend is known to accept the field); the proxy only obeys. Unset, nothing is added: a
	// server that refuses unknown fields answers 400 to a request carrying it.
	StreamUsage bool `json:"streamUsage,omitempty"`
	// Metrics, with Balancing EngineAware and a runtime whose metrics the operator knows, is
	// where the pods' model server reports its load (engine.go); without it they are scored blind.
	Metrics *EngineMetrics `json:"metrics,omitempty"`
}

// Rule sends the models it matches to Backend, then to Fallbacks in order when Backend fails.
type Rule struct {
	Name      string   `json:"name"`
	Models    []string `json:"models"`
	Backend   string   `json:"backend"`
	Fallbacks []string `json:"fallbacks,omitempty"`
	// Timeout, a Go duration, replaces the proxy's default wait for this rule's requests: the
	// whole answer of a non-streaming request, the gap between two bytes of a stream.
	Timeout string `json:"timeout,omitempty"`
}

// CredentialsOrganizationKey and CredentialsProjectKey are the optional keys of a backend's
// credentials Secret that the proxy sends as OpenAI-Organization and OpenAI-Project.
const (
	CredentialsOrganizationKey = "ORGANIZATION"
	CredentialsProjectKey      = "PROJECT"
)

// TimeoutDuration is the rule's Timeout, 0 when unset.
func (r *Rule) TimeoutDuration() time.Duration {
	d, _ := time.ParseDuration(r.Timeout)
	return d
}

// Marshal is the document's bytes: the same document always gives the same bytes.
func Marshal(d Document) ([]byte, error) {
	d.Version = Version
	if d.Backends == nil {
		d.Backends = []Backend{}
	}
	return json.Marshal(d)
}

// Parse reads and checks a document.
//
// Note: unknown fields are errors too, so a newer operator that adds a field without changing the
// version still makes an older proxy stop with a clear message rather than ignore the field.
func Parse(data []byte) (*Document, error) {
	var probe struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("routing document is not valid JSON: %w", err)
	}
	if probe.Version != Version {
		return nil, fmt.Errorf("routing document version %q is not supported: this proxy reads %q; run the router-proxy image that matches the operator", probe.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	d := &Document{}
	if err := dec.Decode(d); err != nil {
		return nil, fmt.Errorf("routing document %s: %w", Version, err)
	}
	if dec.More() {
		return nil, errors.New("routing document: trailing data after the document")
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("routing document: %w", err)
	}
	return d, nil
}

// Validate checks what the proxy relies on: unique backend names, known kinds, absolute http(s)
// URLs, and rules with models.
func (d *Document) Validate() error {
	seen := make(map[string]bool, len(d.Backends))
	for i, b := range d.Backends {
		if b.Name == "" {
			return fmt.Errorf("backends[%d] has no name", i)
		}
		if seen[b.Name] {
			return fmt.Errorf("backend %q is listed twice", b.Name)
		}
		seen[b.Name] = true
		if b.Kind != KindInferenceService && b.Kind != KindExternal {
			return fmt.Errorf("backend %q has unknown kind %q", b.Name, b.Kind)
		}
		u, err := url.Parse(b.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("backend %q has URL %q, not an absolute http(s) URL", b.Name, b.URL)
		}
	}
	switch d.Balancing {
	case "", BalancingLeastRequest, BalancingPrefixAffinity, BalancingEngineAware:
	default:
		return fmt.Errorf("unknown balancing %q (want %s, %s or %s)", d.Balancing, BalancingLeastRequest, BalancingPrefixAffinity, BalancingEngineAware)
	}
	if (d.Balancing == BalancingEngineAware) != (d.Engine != nil) {
		return fmt.Errorf("engine must be set exactly when balancing is %s", BalancingEngineAware)
	}
	if d.Engine != nil {
		if err := d.Engine.validate(); err != nil {
			return err
		}
	}
	for _, b := range d.Backends {
		if s := b.Service; s != nil && (s.Namespace == "" || s.Name == "" || s.Port == "") {
			return fmt.Errorf("backend %q has a service without namespace, name or port", b.Name)
		}
		if m := b.Metrics; m != nil {
			if err := m.validate(); err != nil {
				return fmt.Errorf("backend %q: %w", b.Name, err)
			}
		}
	}
	if err := d.validateClients(); err != nil {
		return err
	}
	for i, r := range d.Rules {
		if len(r.Models) == 0 {
			return fmt.Errorf("rules[%d] (%q) has no models", i, r.Name)
		}
		if r.Backend == "" {
			return fmt.Errorf("rules[%d] (%q) has no backend", i, r.Name)
		}
		if r.Timeout != "" {
			if d, err := time.ParseDuration(r.Timeout); err != nil || d <= 0 {
				return fmt.Errorf("rules[%d] (%q) has timeout %q, not a positive duration", i, r.Name, r.Timeout)
			}
		}
		if len(r.Fallbacks) > MaxFallbacks {
			return fmt.Errorf("rules[%d] (%q) has %d fallbacks, at most %d", i, r.Name, len(r.Fallbacks), MaxFallbacks)
		}
	}
	return nil
}
