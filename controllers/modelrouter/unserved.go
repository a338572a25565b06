/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"fmt"
	"net/url"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
)

// ReasonUnservedField blocks the plan of a router that sets a field of LLMKube's ModelRouter API
// the proxy does not route by (api/v1alpha1/modelrouter_llmkube_types.go). Routing the rest
// without it would route otherwise than the manifest says, in silence: a "PII stays local" rule
// of LLMKube's form would send sensitive prompts to the default route. So nothing is applied (a
// proxy already running, LLMKube's after an upgrade included, keeps serving as it is) and the
// router reports Stalled=True naming each field and what would serve it.
const ReasonUnservedField = inferenceservice.ReasonUnservedField

// UnservedFields are the fields of router the proxy does not serve, in spec order. Each field of
// LLMKubeRouterFields, LLMKubeBackendFields and LLMKubeRuleFields is listed here when set
// (TestEveryLLMKubeRouterFieldStalls).
func UnservedFields(router *inferencev1alpha1.ModelRouter) []inferenceservice.Unserved {
	var out []inferenceservice.Unserved
	add := func(field, instead string) {
		out = append(out, inferenceservice.Unserved{Field: field, Instead: instead})
	}
	s := &router.Spec
	if s.DataPlane == "Gateway" {
		add("spec.dataPlane: Gateway", "dataPlane Proxy, the router-proxy Deployment")
	}
	if set(s.GatewayRef) {
		add("spec.gatewayRef", "the router's Service (spec.endpoint)")
	}
	if s.DefaultRouteStrategy == "BackendNameMatch" {
		add("spec.defaultRouteStrategy: BackendNameMatch", "a rule per backend with its models")
	}
	if set(s.Policy) {
		add("spec.policy", "spec.clients and spec.limits for budgets and the models each team may use")
	}
	if set(s.MCPServer) {
		add("spec.mcpServer", "no equivalent yet")
	}
	for _, b := range s.Backends {
		at := fmt.Sprintf("spec.backends[%s].", b.Name)
		if b.DisplayName != "" {
			add(at+"displayName", "the models of the rules that name the backend")
		}
		if b.Tier != "" {
			add(at+"tier", "no equivalent yet: fail-closed routing by data classification")
		}
		if len(b.Capabilities) > 0 {
			add(at+"capabilities", "rules by model name")
		}
		if b.Weight != nil {
			add(at+"weight", "spec.proxy.balancing across a backend's pods")
		}
		if set(b.CostPerMillionTokens) {
			add(at+"costPerMillionTokens", "spec.clients[].limits")
		}
		if set(b.HealthCheck) {
			add(at+"healthCheck", "the proxy's own ejection of failing pods")
		}
		if b.Timeout != "" {
			add(at+"timeout", "spec.rules[].timeout")
		}
		if e := b.External; e != nil {
			switch e.Provider {
			case "bedrock", "vertex_ai", "litellm":
				add(at+"external.provider: "+e.Provider, "openai-compatible with its URL")
			}
		}
	}
	for _, r := range s.Rules {
		at := fmt.Sprintf("spec.rules[%s].", r.Name)
		if set(r.Match) {
			add(at+"match", "models")
		}
		if set(r.Route) {
			add(at+"route", "backend and fallbacks")
		}
		if r.FailClosed {
			add(at+"failClosed", "no equivalent yet: a rule whose only backend is local")
		}
	}
	if p := s.Proxy; p != nil {
		if p.Resources != nil && (len(p.Resources.Requests) > 0 || len(p.Resources.Limits) > 0) {
			add("spec.proxy.resources.requests/limits", "spec.proxy.resources.cpu and memory")
		}
		if p.QuarantineDuration != nil {
			add("spec.proxy.quarantineDuration", "the proxy's own ejection of failing pods")
		}
		if p.ResponseHeaderTimeout != nil {
			add("spec.proxy.responseHeaderTimeout", "spec.rules[].timeout")
		}
	}
	return out
}

// UnservedMessage is the Stalled message of fields.
func UnservedMessage(fields []inferenceservice.Unserved) string {
	return fmt.Sprintf("the router-proxy accepts and does not route by %s: remove the field or use what is named instead; until then nothing of the router is applied, and a proxy already running keeps serving as it is",
		inferenceservice.JoinUnserved(fields))
}

// externalURL is where an external backend's requests go, with this proxy's meaning: a base that
// request paths are appended to without their /v1. LLMKube's form, a URL without a path or no URL
// at all for its first-party providers, names the API's host, so its base is the host's /v1.
func externalURL(e *inferencev1alpha1.ExternalBackend) (string, string) {
	raw := e.URL
	if raw == "" {
		switch e.Provider {
		case "openai":
			raw = "https://api.openai.com"
		case "anthropic":
			raw = "https://api.anthropic.com"
		default:
			return "", fmt.Sprintf("provider %s has no default URL: set external.url", e.Provider)
		}
	}
	if u, err := url.Parse(raw); err == nil && strings.Trim(u.Path, "/") == "" {
		u.Path = "/v1"
		return u.String(), ""
	}
	return raw, ""
}

// set says whether a JSON group is present, even empty ({}), as the user wrote it.
func set(j *apiextensionsv1.JSON) bool { return j != nil && len(j.Raw) > 0 && string(j.Raw) != "null" }
