/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

// ConditionGatewayReady is True when every Gateway in spec.gateway.parentRefs accepted the HTTPRoute and the InferencePool and resolved their references, Unknown until each has answered, and False when one refused or the Gateway API CRDs are not installed.
const ConditionGatewayReady = "GatewayReady"

// GatewaySpec attaches an InferenceService to Gateways through an InferencePool (inference.networking.k8s.io/v1) and an HTTPRoute (gateway.networking.k8s.io/v1).
type GatewaySpec struct {
	// parentRefs are the Gateways the HTTPRoute attaches to: at least one. Two references to the same Gateway must each name a different listener in sectionName.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(p1, self.all(p2, p1.name == p2.name && (has(p1.__namespace__) ? p1.__namespace__ : '') == (has(p2.__namespace__) ? p2.__namespace__ : '') ? has(p1.sectionName) == has(p2.sectionName) : true))",message="spec.gateway.parentRefs: when two references name the same Gateway, both must set sectionName"
	// +kubebuilder:validation:XValidation:rule="self.all(p1, self.exists_one(p2, p1.name == p2.name && (has(p1.__namespace__) ? p1.__namespace__ : '') == (has(p2.__namespace__) ? p2.__namespace__ : '') && (has(p1.sectionName) ? p1.sectionName : '') == (has(p2.sectionName) ? p2.sectionName : '')))",message="spec.gateway.parentRefs must not name the same Gateway listener twice"
	ParentRefs []GatewayParentReference `json:"parentRefs"`

	// endpointPickerRef is the endpoint picker Service the InferencePool hands each request to, to choose the pod that serves it. Without it, the Gateway picks pods by itself, if it can.
	// +optional
	EndpointPickerRef *EndpointPickerRef `json:"endpointPickerRef,omitempty"`

	// modelName is the model name clients send. When set, the HTTPRoute matches only requests whose X-Gateway-Model-Name header (set by the Gateway's body-based routing from the request's "model") equals it, so several InferenceServices can share one Gateway. Without it, the HTTPRoute takes every request to its hostnames.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	ModelName *string `json:"modelName,omitempty"`

	// hostnames the HTTPRoute matches, as in an HTTPRoute: a DNS name, optionally with a leading "*." wildcard label. Without them, the HTTPRoute matches every hostname of its Gateway listeners.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Hostnames []GatewayHostname `json:"hostnames,omitempty"`
}

// GatewayParentReference names a Gateway, and optionally one of its listeners.
type GatewayParentReference struct {
	// name of the Gateway.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// namespace of the Gateway; the InferenceService's own namespace when unset. A Gateway in another namespace must allow routes from this one.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace *string `json:"namespace,omitempty"`

	// sectionName is the name of the Gateway listener to attach to; all of the Gateway's listeners that allow the route when unset.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SectionName *string `json:"sectionName,omitempty"`
}

// EndpointPickerRef names the endpoint picker Service of an InferencePool.
type EndpointPickerRef struct {
	// name of the endpoint picker Service, in the InferenceService's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// port of the endpoint picker Service that serves its extension protocol.
	// +required
	Port EndpointPickerPort `json:"port"`

	// failureMode says what the Gateway does when the endpoint picker does not answer: FailClose (the default) rejects the request, FailOpen sends it to a pod of the pool chosen without the picker.
	// +optional
	// +kubebuilder:default=FailClose
	FailureMode EndpointPickerFailureMode `json:"failureMode,omitempty"`
}

// EndpointPickerPort is a port of the endpoint picker Service.
type EndpointPickerPort struct {
	// number of the port.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Number int32 `json:"number"`
}

// EndpointPickerFailureMode is what a Gateway does when the endpoint picker fails.
// +kubebuilder:validation:Enum=FailOpen;FailClose
type EndpointPickerFailureMode string

const (
	// EndpointPickerFailOpen sends the request on without the picker's choice.
	EndpointPickerFailOpen EndpointPickerFailureMode = "FailOpen"
	// EndpointPickerFailClose rejects the request.
	EndpointPickerFailClose EndpointPickerFailureMode = "FailClose"
)

// GatewayHostname is a DNS name, optionally with a leading "*." wildcard label.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
type GatewayHostname string
