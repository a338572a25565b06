/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModelRouterSpec routes OpenAI-style requests by model name to InferenceServices or external APIs.
//
// +kubebuilder:validation:XValidation:rule="!has(self.defaultRoute) || self.backends.exists(b, b.name == self.defaultRoute)",message="spec.defaultRoute must name one of spec.backends"
// +kubebuilder:validation:XValidation:rule="!has(self.rules) || self.rules.all(r, self.backends.exists(b, b.name == r.backend))",message="every spec.rules[].backend must name one of spec.backends"
// +kubebuilder:validation:XValidation:rule="!has(self.rules) || self.rules.all(r, !has(r.fallbacks) || r.fallbacks.all(f, self.backends.exists(b, b.name == f)))",message="every spec.rules[].fallbacks entry must name one of spec.backends"
type ModelRouterSpec struct {
	// backends the router can send requests to, merged by name.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Backends []Backend `json:"backends"`

	// rules map model names to backends, tried in order; merged by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Rules []RoutingRule `json:"rules,omitempty"`

	// defaultRoute is the backend for a model no rule matches.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	DefaultRoute *string `json:"defaultRoute,omitempty"`

	// endpoint is how the router is exposed.
	// +optional
	Endpoint *EndpointSpec `json:"endpoint,omitempty"`

	// proxy configures the router-proxy pods.
	// +optional
	Proxy *ProxySpec `json:"proxy,omitempty"`
}

// Backend is one place requests can go.
// +kubebuilder:validation:XValidation:rule="has(self.inferenceServiceRef) != has(self.external)",message="a backend sets exactly one of inferenceServiceRef and external"
type Backend struct {
	// name of the backend, unique in the router.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// inferenceServiceRef names an InferenceService in the router's namespace.
	// +optional
	InferenceServiceRef *LocalObjectReference `json:"inferenceServiceRef,omitempty"`

	// external is an OpenAI-compatible API outside the cluster.
	// +optional
	External *ExternalBackend `json:"external,omitempty"`
}

// ExternalBackend is an API outside the cluster.
type ExternalBackend struct {
	// provider of the API.
	// +required
	// +kubebuilder:validation:Enum=openai;anthropic;azure-openai;openai-compatible
	Provider string `json:"provider"`

	// url of the API.
	// +required
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="spec.backends[].external.url must be an http:// or https:// URL"
	URL string `json:"url"`

	// model name to send to the API, when it differs from the requested one.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model *string `json:"model,omitempty"`

	// credentialsSecretRef names a Secret whose keys become the proxy's environment (envFrom).
	// The operator never reads the Secret's data.
	// +optional
	CredentialsSecretRef *LocalObjectReference `json:"credentialsSecretRef,omitempty"`
}

// RoutingRule sends requests for some models to one backend.
// +kubebuilder:validation:XValidation:rule="!has(self.fallbacks) || !self.fallbacks.exists(f, f == self.backend)",message="spec.rules[].fallbacks must name backends other than the rule's own backend"
type RoutingRule struct {
	// name of the rule, unique in the router.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// models this rule matches; a trailing * matches a prefix.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	Models []string `json:"models"`

	// backend the matched requests go to.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Backend string `json:"backend"`

	// fallbacks are backends tried in order when the backend fails before anything reached the
	// client (a connection error, a timeout before response headers, a 429 or a 5xx).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	Fallbacks []string `json:"fallbacks,omitempty"`
}

// ProxySpec configures the router-proxy pods.
type ProxySpec struct {
	// replicas of the proxy; 1 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// image of the proxy.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image *string `json:"image,omitempty"`

	// resources of the proxy container.
	// +optional
	Resources *ProxyResources `json:"resources,omitempty"`

	// imagePullSecrets for the proxy image.
	// +optional
	// +listType=map
	// +listMapKey=name
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// nodeSelector of the proxy pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// revisionHistoryLimit of the proxy Deployment.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// podLabels are added to the proxy pods; the operator's labels win, and selector keys are rejected.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",messageExpression="'spec.proxy.podLabels has an invalid label key: ' + self.filter(k, format.qualifiedName().validate(k).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	// +kubebuilder:validation:XValidation:rule="!('app' in self)",message="spec.proxy.podLabels must not set app: the operator reserves it for the Deployment and Service selector"
	// +kubebuilder:validation:XValidation:rule="!('inference.llmkube.dev/model-router' in self)",message="spec.proxy.podLabels must not set inference.llmkube.dev/model-router: the operator reserves it for the Deployment and Service selector"
	PodLabels map[string]LabelValue `json:"podLabels,omitempty"`

	// apiKeySecretRef names a Secret whose values are the API keys clients must send
	// (Authorization: Bearer <key>). It is mounted as a volume, so a rotated key works without a
	// restart. Without it, anyone who reaches the router's Service spends the external API keys.
	// +optional
	APIKeySecretRef *LocalObjectReference `json:"apiKeySecretRef,omitempty"`

	// balancing is how the proxy chooses among the ready pods of an InferenceService backend. LeastRequest sends each request to the less busy of two pods picked at random, counting the requests and open streams the proxy has in flight to each. PrefixAffinity sends requests whose prompts start the same way (the leading messages up to the first user message) to the same pod, so that its prefix cache is reused, as long as that pod is not busier than 1.25 times the mean; a request with an x-session-id header sticks to a pod by that header instead. External backends are not balanced by the proxy.
	// Defaults to LeastRequest.
	// +optional
	// +kubebuilder:validation:Enum=LeastRequest;PrefixAffinity
	Balancing *BalancingPolicy `json:"balancing,omitempty"`

	// podAnnotations are added to the proxy pods.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k.lowerAscii()).hasValue())",messageExpression="'spec.proxy.podAnnotations has an invalid annotation key: ' + self.filter(k, format.qualifiedName().validate(k.lowerAscii()).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
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
	// cpu request of the proxy; 100m when unset.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// memory request and limit of the proxy; 128Mi when unset.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// BackendStatus is how one backend resolved.
type BackendStatus struct {
	// name of the backend.
	// +required
	Name string `json:"name"`
	// url requests for this backend go to, when resolved.
	// +optional
	URL string `json:"url,omitempty"`
	// resolved is true when the backend's references exist.
	// +required
	Resolved bool `json:"resolved"`
	// message says what is missing.
	// +optional
	Message string `json:"message,omitempty"`
}

// ModelRouterStatus is what the operator observed.
type ModelRouterStatus struct {
	// conditions: Ready, ResolvedRefs, Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the status speaks of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// endpoint is the in-cluster URL of the router.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// backends reports each backend's resolution.
	// +optional
	// +listType=map
	// +listMapKey=name
	Backends []BackendStatus `json:"backends,omitempty"`
}

// ModelRouter routes requests by model name to InferenceServices and external APIs.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mr,categories=llmkube
// +kubebuilder:printcolumn:name="Backends",type=integer,JSONPath=`.spec.backends.length()`,priority=1
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
