/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Maintainers: LLMKube v0.9.19's fields of a ModelRouter that this API did not have, with
// LLMKube's names, so that its manifests apply here unchanged (strict field validation included)
// and a router LLMKube's operator stored keeps every field it had (a fail-closed "PII stays local"
// rule must never be pruned). The router-proxy does not route by them yet: a router that sets one
// is accepted, its plan applies nothing (a proxy already running, LLMKube's included, keeps
// serving as it is) and it reports Stalled=True with the reason UnservedField naming each field
// (controllers/modelrouter/unserved.go). The groups are stored as JSON objects that keep every
// field, so a later version can serve them from what is stored.

// LLMKubeRouterFields are LLMKube's fields of a ModelRouter's spec.
type LLMKubeRouterFields struct {
	// dataPlane is LLMKube's choice of data plane: Proxy (a router-proxy Deployment, what this operator runs) or Gateway (Gateway API routes compiled onto spec.gatewayRef). Gateway is not served.
	// +optional
	// +kubebuilder:validation:Enum=Proxy;Gateway
	DataPlane string `json:"dataPlane,omitempty"`

	// gatewayRef is LLMKube's Gateway for dataPlane Gateway. Not served.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	GatewayRef *apiextensionsv1.JSON `json:"gatewayRef,omitempty"`

	// defaultRouteStrategy is how LLMKube resolves a request no rule matches: Static (defaultRoute, what this router does) or BackendNameMatch (a backend named as the request's model first). BackendNameMatch is not served.
	// +optional
	// +kubebuilder:validation:Enum=Static;BackendNameMatch
	DefaultRouteStrategy string `json:"defaultRouteStrategy,omitempty"`

	// policy is LLMKube's router policy: budgets, data classification, audit log and auth. Not served: use spec.clients and spec.limits for budgets and per-team models.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Policy *apiextensionsv1.JSON `json:"policy,omitempty"`

	// mcpServer is LLMKube's MCP server switch. Not served.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	MCPServer *apiextensionsv1.JSON `json:"mcpServer,omitempty"`
}

// LLMKubeBackendFields are LLMKube's fields of a ModelRouter's backend.
type LLMKubeBackendFields struct {
	// displayName is the model id LLMKube publishes for the backend on /v1/models. Not served: this router publishes the models of its rules.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DisplayName string `json:"displayName,omitempty"`

	// tier is LLMKube's locality of the backend, local or cloud, which its fail-closed rules check. Not served.
	// +optional
	// +kubebuilder:validation:Enum=local;cloud
	Tier string `json:"tier,omitempty"`

	// capabilities are what LLMKube's rules match with requiredCapabilities, such as code or vision. Not served.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	Capabilities []string `json:"capabilities,omitempty"`

	// weight is LLMKube's share of the weighted strategy. Not served.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Weight *int32 `json:"weight,omitempty"`

	// costPerMillionTokens is LLMKube's price of the backend, which its budgets count. Not served.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	CostPerMillionTokens *apiextensionsv1.JSON `json:"costPerMillionTokens,omitempty"`

	// healthCheck is LLMKube's active probe of the backend. Not served: this proxy ejects a failing pod from its answers.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	HealthCheck *apiextensionsv1.JSON `json:"healthCheck,omitempty"`

	// timeout is LLMKube's per-backend request deadline, as a duration. Not served: set spec.rules[].timeout.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Timeout string `json:"timeout,omitempty"`
}

// LLMKubeRuleFields are LLMKube's fields of a ModelRouter's rule: a rule of LLMKube's form sets
// match and route instead of models and backend.
type LLMKubeRuleFields struct {
	// match is what a request must carry for LLMKube's rule to apply: dataClassification, taskComplexity, requiredCapabilities, latencySLOMs, headers, models. Not served.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Match *apiextensionsv1.JSON `json:"match,omitempty"`

	// route is where LLMKube's rule sends the request: backends in order and a strategy. Not served: set backend and fallbacks.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Route *apiextensionsv1.JSON `json:"route,omitempty"`

	// failClosed makes LLMKube's rule answer 503 rather than send sensitive data to a cloud-tier backend or fall through. Not served.
	// +optional
	FailClosed bool `json:"failClosed,omitempty"`
}
