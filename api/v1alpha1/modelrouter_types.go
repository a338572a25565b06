/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Maintainers: the rules[].backend message is built with format(), not +: the API server's cost
// estimate of a string concatenation in a messageExpression exceeds the CRD budget by far (100x),
// while format() of the same parts fits. The index is indexOf on the rule itself (cheap enough), not
// on a mapped list of names (refused). Verified on kube-apiserver by the admission spec.

// ModelRouterSpec describes a proxy that routes OpenAI-style requests by model name to InferenceServices or external APIs.
//
// +kubebuilder:validation:XValidation:rule="!has(self.defaultRoute) || self.backends.exists(b, b.name == self.defaultRoute)",message="spec.defaultRoute must name one of spec.backends"
// +kubebuilder:validation:XValidation:rule="!has(self.rules) || self.rules.all(r, !has(r.backend) || self.backends.exists(b, b.name == r.backend))",messageExpression="'spec.rules[%d].backend: %s (rule %s) is not the name of any of spec.backends %s: name one of those, or add a backend with that name'.format([self.rules.indexOf(self.rules.filter(r, has(r.backend) && !self.backends.exists(b, b.name == r.backend))[0]), self.rules.filter(r, has(r.backend) && !self.backends.exists(b, b.name == r.backend))[0].backend, self.rules.filter(r, has(r.backend) && !self.backends.exists(b, b.name == r.backend))[0].name, self.backends.map(b, b.name)])"
// +kubebuilder:validation:XValidation:rule="!has(self.rules) || self.rules.all(r, !has(r.fallbacks) || r.fallbacks.all(f, self.backends.exists(b, b.name == f)))",message="every spec.rules[].fallbacks entry must name one of spec.backends"
// +kubebuilder:validation:XValidation:rule="!has(self.clients) || (has(self.proxy) && has(self.proxy.apiKeySecretRef))",message="spec.clients needs spec.proxy.apiKeySecretRef: a client is known by the keys of that Secret it sends"
// +kubebuilder:validation:XValidation:rule="!has(self.clients) || self.clients.all(c, c.secretKeys.all(k, self.clients.filter(d, k in d.secretKeys).size() == 1))",message="spec.clients[].secretKeys: a key of the Secret belongs to at most one client"
type ModelRouterSpec struct {
	// backends are the places the router can send requests to: InferenceServices in the same namespace or external APIs. Entries are merged by name, so several tools can each manage their own backends. At least 1 and at most 64 items.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Backends []Backend `json:"backends"`

	// rules send requests to a backend by the model they ask for. Rules are tried in order and the first that matches wins; entries are merged by name. At most 128 items.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Rules []RoutingRule `json:"rules,omitempty"`

	// defaultRoute names the backend that receives requests for a model no rule matches; it must be one of backends. When unset, the router has no backend for such requests.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	DefaultRoute *string `json:"defaultRoute,omitempty"`

	// endpoint says how the router is exposed: the Service's port and type, and the API path shown in status.endpoint. When unset, a ClusterIP Service on port 8080.
	// +optional
	Endpoint *EndpointSpec `json:"endpoint,omitempty"`

	// proxy configures the router-proxy pods: replicas, image, resources and scheduling. When unset, one pod of the default image.
	// +optional
	Proxy *ProxySpec `json:"proxy,omitempty"`

	// clients name the teams that use the router, by the keys of spec.proxy.apiKeySecretRef they send: the models each may use and its limits (modelrouter_limits_types.go). A key no client names may use every model without limit. Entries are merged by name. At most 64 items.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Clients []RouterClient `json:"clients,omitempty"`

	// limits says where the proxy replicas count the clients' limits (a shared Redis, or each replica alone) and what they do when they cannot.
	// +optional
	Limits *LimitsSpec `json:"limits,omitempty"`

	LLMKubeRouterFields `json:",inline"`
}

// Backend is one place requests can go: an InferenceService or an external API.
// +kubebuilder:validation:XValidation:rule="has(self.inferenceServiceRef) != has(self.external)",message="a backend sets exactly one of inferenceServiceRef and external"
type Backend struct {
	// name identifies the backend in rules and defaultRoute; unique in the router. A DNS label: lowercase alphanumerics and -, at most 63 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// inferenceServiceRef names an InferenceService in the router's namespace; requests go to its Service. Set exactly one of inferenceServiceRef and external.
	// +optional
	InferenceServiceRef *LocalObjectReference `json:"inferenceServiceRef,omitempty"`

	// external is an API outside the cluster. Set exactly one of inferenceServiceRef and external.
	// +optional
	External *ExternalBackend `json:"external,omitempty"`

	// streamUsage says whether the proxy asks this backend for the token usage of a chat or completions stream whose client did not ask for it (it adds stream_options.include_usage to the request and keeps the usage-only chunk from the client). Auto asks only a backend known to accept the field: the vllm, sglang and llamacpp runtimes, and the openai, anthropic and azure-openai (api-version 2024-09-01 or later, or the v1 API) providers. Always asks every time; Never never does (a server that refuses unknown fields answers 400 to such a request). A stream without usage has its output tokens estimated by the proxy instead. A client that sets include_usage itself is never overridden. Defaults to Auto.
	// +optional
	// +kubebuilder:validation:Enum=Auto;Always;Never
	StreamUsage *StreamUsagePolicy `json:"streamUsage,omitempty"`

	LLMKubeBackendFields `json:",inline"`
}

// StreamUsagePolicy is whether the proxy asks a backend for a stream's token usage.
type StreamUsagePolicy string

// Stream usage policies.
const (
	StreamUsageAuto   StreamUsagePolicy = "Auto"
	StreamUsageAlways StreamUsagePolicy = "Always"
	StreamUsageNever  StreamUsagePolicy = "Never"
)

// ExternalBackend is an API outside the cluster.
type ExternalBackend struct {
	// provider is the kind of API the backend speaks, which tells the proxy how to talk to it: openai, anthropic, azure-openai or openai-compatible. LLMKube's bedrock, vertex_ai and litellm are accepted and not served (the router reports Stalled=True, UnservedField).
	// +required
	// +kubebuilder:validation:Enum=openai;anthropic;azure-openai;openai-compatible;bedrock;vertex_ai;litellm
	Provider string `json:"provider"`

	// url is the base URL of the API, starting with http:// or https://, such as https://api.openai.com/v1; request paths are appended to it without their leading /v1. A URL without a path (LLMKube's form, https://api.anthropic.com) is the API's host, and requests keep their whole path. Defaults to https://api.openai.com for openai and https://api.anthropic.com for anthropic, as in LLMKube; required for the other providers. At most 2048 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="spec.backends[].external.url must be an http:// or https:// URL"
	URL string `json:"url,omitempty"`

	// model replaces the model name of a request sent to this backend, for when the API calls the model differently. Defaults to the requested name. At most 256 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model *string `json:"model,omitempty"`

	// credentialsSecretRef names a Secret in the router's namespace holding the API key under API_KEY (and optionally ORGANIZATION and PROJECT). The proxy pods mount these keys and reread them, so a rotated key is used without a restart. The operator never reads the Secret's data; the backend is unresolved until the Secret exists.
	// +optional
	CredentialsSecretRef *LocalObjectReference `json:"credentialsSecretRef,omitempty"`
}

// RoutingRule sends requests for some models to one backend.
// +kubebuilder:validation:XValidation:rule="!has(self.fallbacks) || !has(self.backend) || !self.fallbacks.exists(f, f == self.backend)",message="spec.rules[].fallbacks must name backends other than the rule's own backend"
// +kubebuilder:validation:XValidation:rule="has(self.route) ? !has(self.models) && !has(self.backend) && !has(self.fallbacks) : has(self.models) && has(self.backend)",message="a rule sets models and backend (with fallbacks), or LLMKube's match and route, not both"
type RoutingRule struct {
	// name identifies the rule; unique in the router. At most 63 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// models are the model names this rule matches. A name ending in * matches every model that starts with the rest, for example llama-*. At least 1 and at most 64 names of at most 256 characters.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	Models []string `json:"models,omitempty"`

	// backend names the backend that receives the matched requests; it must be one of backends. Required with models; a rule of LLMKube's form sets match and route instead.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Backend string `json:"backend,omitempty"`

	// fallbacks are backends tried in order when the backend fails before anything reached the client (a connection error, a 429 or a 5xx, after the backend's other pods were tried; or a timeout, which is not retried on the same backend).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	Fallbacks []string `json:"fallbacks,omitempty"`

	// timeout replaces the proxy's wait limits for this rule's requests, as a Go duration such as 90s or 10m: the whole answer of a non-streaming request (default 30m) and the gap between two bytes of a stream (default 5m). Set it to fall back sooner to a fallback backend, or to cut runaway generations; a timeout is not a pod failure and is never retried on the same backend.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="timeout must be a positive duration such as 90s or 10m"
	Timeout *string `json:"timeout,omitempty"`

	LLMKubeRuleFields `json:",inline"`
}

// ProxySpec configures the router-proxy pods.
// +kubebuilder:validation:XValidation:rule="!has(self.engineScoring) || (has(self.balancing) && self.balancing == 'EngineAware')",message="spec.proxy.engineScoring is read only with spec.proxy.balancing: EngineAware; set balancing to EngineAware or remove engineScoring"
type ProxySpec struct {
	// replicas is the number of proxy pods. Defaults to 1; 0 stops the router.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// image is the container image of the proxy. Defaults to ghcr.io/llmkube/router-proxy:latest. At most 1024 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image *string `json:"image,omitempty"`

	// resources is the CPU and memory of the proxy container. Defaults to 100m CPU and 256Mi of memory (docs/router.md, "Memory", says what a concurrency and prompt size need).
	// +optional
	Resources *ProxyResources `json:"resources,omitempty"`

	// imagePullSecrets name Secrets in the same namespace that hold credentials for pulling the proxy image from a private registry.
	// +optional
	// +listType=map
	// +listMapKey=name
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// nodeSelector schedules the proxy pods only on nodes that carry all of these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// revisionHistoryLimit is how many old ReplicaSets the proxy Deployment keeps for a rollback. Defaults to the Deployment's default, 10.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// podLabels are added to the labels of the proxy pods. The operator's own labels win on a clash, and the keys the operator selects pods by (app and inference.llmkube.dev/model-router) are rejected. At most 64 labels; keys and values follow the Kubernetes label syntax.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",messageExpression="'spec.proxy.podLabels has an invalid label key: ' + self.filter(k, format.qualifiedName().validate(k).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	// +kubebuilder:validation:XValidation:rule="!('app' in self)",message="spec.proxy.podLabels must not set app: the operator reserves it for the Deployment and Service selector"
	// +kubebuilder:validation:XValidation:rule="!('inference.llmkube.dev/model-router' in self)",message="spec.proxy.podLabels must not set inference.llmkube.dev/model-router: the operator reserves it for the Deployment and Service selector"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k == 'inference.llmkube.dev/model-router' || !k.startsWith('inference.llmkube.dev/'))",messageExpression="'spec.proxy.podLabels must not set ' + self.filter(k, k != 'inference.llmkube.dev/model-router' && k.startsWith('inference.llmkube.dev/'))[0] + ': keys under inference.llmkube.dev/ are the operator\\'s own, and it would overwrite yours; use a prefix of your own, such as example.com/team'"
	PodLabels map[string]LabelValue `json:"podLabels,omitempty"`

	// apiKeySecretRef names a Secret whose values are the API keys clients must send as "Authorization: Bearer <key>". It is mounted as a volume, so a rotated key works without a restart. When unset, the router accepts every request: anyone who reaches its Service spends the external API keys.
	// +optional
	APIKeySecretRef *LocalObjectReference `json:"apiKeySecretRef,omitempty"`

	// balancing is how the proxy chooses among the ready pods of an InferenceService backend. LeastRequest sends each request to the less busy of two pods picked at random, counting the requests and open streams the proxy has in flight to each. PrefixAffinity sends a request to the pod that was sent the longest start of its prompt's text (in blocks of 128 bytes, so conversations sharing a system prompt meet on one pod and a conversation's next turn follows its earlier turns), so that its prefix cache is reused, as long as that pod is not busier than 1.25 times the mean; with no such pod, least request; a request with an x-session-id header sticks to a pod by that header instead. EngineAware scores each pod on what its model server reports (requests waiting and running, KV-cache use, read from its metrics endpoint every 100ms), this proxy's requests in flight to it and its prefix match, weighted by engineScoring; a pod whose metrics cannot be read goes by this proxy's own counts. External backends are not balanced by the proxy. Defaults to LeastRequest.
	// +optional
	// +kubebuilder:validation:Enum=LeastRequest;PrefixAffinity;EngineAware
	Balancing *BalancingPolicy `json:"balancing,omitempty"`

	// engineScoring weighs the terms of EngineAware balancing; only with balancing: EngineAware.
	// +optional
	EngineScoring *EngineScoring `json:"engineScoring,omitempty"`

	// podAnnotations are added to the annotations of the proxy pods. They win over the operator's own annotations. At most 64 annotations; keys follow the Kubernetes annotation key syntax.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k.lowerAscii()).hasValue())",messageExpression="'spec.proxy.podAnnotations has an invalid annotation key: ' + self.filter(k, format.qualifiedName().validate(k.lowerAscii()).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// quarantineDuration is how long LLMKube's proxy keeps a failing backend out, as a duration. Not served: this proxy ejects a failing pod and tries it again by itself.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	QuarantineDuration *string `json:"quarantineDuration,omitempty"`

	// responseHeaderTimeout is LLMKube's wait for a backend's response headers, as a duration. Not served: set spec.rules[].timeout.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ResponseHeaderTimeout *string `json:"responseHeaderTimeout,omitempty"`
}

// BalancingPolicy is how a router's proxy chooses among an InferenceService's pods.
type BalancingPolicy string

// Balancing policies.
const (
	BalancingLeastRequest   BalancingPolicy = "LeastRequest"
	BalancingPrefixAffinity BalancingPolicy = "PrefixAffinity"
)

// ProxyResources is the compute a proxy container asks for.
type ProxyResources struct {
	// cpu is the CPU the proxy requests, as a quantity such as 100m. No limit is set. Defaults to 100m.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// memory is the memory the proxy requests and is limited to, as a quantity such as 128Mi. Defaults to 256Mi; GOMEMLIMIT is set from it.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`

	// requests is LLMKube's form of the proxy's resources, as in a container's. Not served: set cpu and memory (the router reports Stalled=True, UnservedField).
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`

	// limits is LLMKube's form of the proxy's resource limits, as in a container's. Not served: set memory, which is also the limit.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// BackendStatus is how one backend resolved.
type BackendStatus struct {
	// name is the name of the backend in spec.backends.
	// +required
	Name string `json:"name"`

	// url is where the proxy sends this backend's requests; empty while the backend is unresolved.
	// +optional
	URL string `json:"url,omitempty"`

	// resolved is true when everything the backend refers to exists: its InferenceService, or its credentials Secret. The router serves only resolved backends.
	// +required
	Resolved bool `json:"resolved"`

	// message says what is missing when the backend is unresolved.
	// +optional
	Message string `json:"message,omitempty"`
}

// ModelRouterStatus is the state of a ModelRouter as the operator last observed it.
type ModelRouterStatus struct {
	// conditions are the detailed state: Ready (a proxy replica is available), ResolvedRefs (every backend resolves; the message names the ones that do not) and Degraded (the operator could not apply the desired state; the message quotes the API server).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation of the spec this status describes; when it is behind, the operator has not seen the latest change yet.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// endpoint is the in-cluster URL of the router's API, for example http://name-router-proxy.namespace.svc.cluster.local:8080.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// backends says, for each backend of the spec, whether it resolved and where its requests go.
	// +optional
	// +listType=map
	// +listMapKey=name
	Backends []BackendStatus `json:"backends,omitempty"`

	// backendsResolved is the number of resolved backends out of the number in the spec, such as 2/3.
	// +optional
	BackendsResolved string `json:"backendsResolved,omitempty"`
}

// ModelRouter routes OpenAI-style requests by model name to InferenceServices and external APIs, through a proxy Deployment the operator runs behind a Service.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mr,categories=llmkube
// +kubebuilder:printcolumn:name="Backends",type=string,JSONPath=`.status.backendsResolved`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ModelRouter struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ModelRouterSpec `json:"spec"`
	// +optional
	Status ModelRouterStatus `json:"status,omitempty"`
}

// ModelRouterList is a list of ModelRouters.
// +kubebuilder:object:root=true
type ModelRouterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModelRouter `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ModelRouter{}, &ModelRouterList{})
}
