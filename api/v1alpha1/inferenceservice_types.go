/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Runtime is the inference server an InferenceService runs.
// +kubebuilder:validation:Enum=llamacpp;vllm;tgi;sglang;personaplex;generic
type Runtime string

const (
	RuntimeLlamaCPP    Runtime = "llamacpp"
	RuntimeVLLM        Runtime = "vllm"
	RuntimeTGI         Runtime = "tgi"
	RuntimeSGLang      Runtime = "sglang"
	RuntimePersonaPlex Runtime = "personaplex"
	RuntimeGeneric     Runtime = "generic"
)

// InferenceServiceSpec is what a user needs to serve one model with one runtime.
//
// +kubebuilder:validation:XValidation:rule="self.runtime != 'generic' || has(self.image)",message="spec.image is required when runtime is generic: the operator knows no default image for it"
type InferenceServiceSpec struct {
	// runtime is the inference server: llamacpp, vllm, tgi, sglang, personaplex or generic.
	// +optional
	// +kubebuilder:default=llamacpp
	Runtime Runtime `json:"runtime,omitempty"`

	// model says what the runtime loads.
	// +required
	Model ModelSpec `json:"model"`

	// image overrides the runtime's default image.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image *string `json:"image,omitempty"`

	// args replaces the arguments the operator builds for the runtime.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Args []string `json:"args,omitempty"`

	// extraArgs is appended to the runtime's arguments.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	ExtraArgs []string `json:"extraArgs,omitempty"`

	// env is added to the runtime container, merged by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Env []corev1.EnvVar `json:"env,omitempty"`

	// replicas is the number of runtime pods when autoscaling is not set.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// containerPort is the port the runtime listens on; it defaults to endpoint.port, then to the
	// runtime's own default.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ContainerPort *int32 `json:"containerPort,omitempty"`

	// endpoint is how the model is exposed.
	// +optional
	Endpoint *EndpointSpec `json:"endpoint,omitempty"`

	// resources of the runtime container.
	// +optional
	Resources *ResourceSpec `json:"resources,omitempty"`

	// podLabels are added to the runtime pods. The operator's own labels win on a clash, and the
	// selector keys are rejected.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",messageExpression="'spec.podLabels has an invalid label key: ' + self.filter(k, format.qualifiedName().validate(k).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	// +kubebuilder:validation:XValidation:rule="!('app' in self)",message="spec.podLabels must not set app: the operator reserves it for the Deployment and Service selector"
	// +kubebuilder:validation:XValidation:rule="!('inference.llmkube.dev/service' in self)",message="spec.podLabels must not set inference.llmkube.dev/service: the operator reserves it for the Deployment and Service selector"
	PodLabels map[string]LabelValue `json:"podLabels,omitempty"`

	// podAnnotations are added to the runtime pods. They win over the operator's own annotations.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k.lowerAscii()).hasValue())",messageExpression="'spec.podAnnotations has an invalid annotation key: ' + self.filter(k, format.qualifiedName().validate(k.lowerAscii()).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// nodeSelector constrains the runtime pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the runtime pods. Tolerations have no key that identifies them, so the list
	// is replaced whole.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// imagePullSecrets for the runtime image.
	// +optional
	// +listType=map
	// +listMapKey=name
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// podSecurityContext of the runtime pods.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// securityContext of the runtime container.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// autoscaling creates a HorizontalPodAutoscaler; the operator then leaves replicas to it.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// disruption says when the runtime pods ask Karpenter not to disrupt them.
	// +optional
	Disruption *DisruptionSpec `json:"disruption,omitempty"`

	// rolloutPolicy says how pod-template changes roll out.
	// +optional
	RolloutPolicy *RolloutPolicy `json:"rolloutPolicy,omitempty"`

	// revisionHistoryLimit of the Deployment.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// gateway serves the model through Gateways that implement the Gateway API Inference
	// Extension: the operator creates an InferencePool that selects the runtime pods and an
	// HTTPRoute that attaches the pool to the Gateways, both named like the InferenceService.
	// Removing gateway deletes both.
	// +optional
	Gateway *GatewaySpec `json:"gateway,omitempty"`
}

// ModelSpec says what the runtime loads.
type ModelSpec struct {
	// source is a Hugging Face repo id (org/name), hf://org/repo[/file], an https:// URL, or an
	// absolute path on a mounted volume.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+(/[!-~]+)?|https://[-A-Za-z0-9.:@]+(/[!-~]*)?|/[!-~]*|[A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+)$')",message="spec.model.source must be a Hugging Face repo id (org/name), hf://org/repo[/file], an https:// URL, or an absolute path on a mounted volume"
	Source string `json:"source"`
}

// EndpointSpec is how a model is exposed.
type EndpointSpec struct {
	// port of the Service.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// path of the API under the port, used in status.endpoint.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/`
	Path *string `json:"path,omitempty"`

	// type of the Service.
	// +optional
	Type *ServiceType `json:"type,omitempty"`
}

// ResourceSpec is the compute a runtime container asks for.
type ResourceSpec struct {
	// gpu is the number of nvidia.com/gpu the container gets. With gpus, the Deployment uses the
	// Recreate strategy, since two copies rarely fit on one node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	GPU *int32 `json:"gpu,omitempty"`

	// cpu request of the container.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// memory request and limit of the container.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// AutoscalingSpec configures a HorizontalPodAutoscaler.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="spec.autoscaling.minReplicas must not be greater than spec.autoscaling.maxReplicas"
type AutoscalingSpec struct {
	// minReplicas is the lower bound; 1 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the upper bound.
	// +required
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// metrics as in a HorizontalPodAutoscaler; CPU utilization of 80% when empty.
	// +optional
	// +listType=atomic
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`
}

// DisruptionSpec says when the runtime pods carry karpenter.sh/do-not-disrupt.
type DisruptionSpec struct {
	// protectStartup protects pods that are not Ready yet (model download and load). Default true.
	// +optional
	ProtectStartup *bool `json:"protectStartup,omitempty"`

	// protectAlways protects the pods all the time.
	// +optional
	ProtectAlways *bool `json:"protectAlways,omitempty"`
}

// RolloutPolicy says how a pod-template change rolls out.
type RolloutPolicy struct {
	// waitForIdle defers a change that would roll the pods until no request is in flight.
	// +optional
	WaitForIdle *bool `json:"waitForIdle,omitempty"`

	// idleTimeoutSeconds bounds the wait; after it the change rolls only with force.
	// +optional
	// +kubebuilder:validation:Minimum=1
	IdleTimeoutSeconds *int32 `json:"idleTimeoutSeconds,omitempty"`

	// force rolls the change once idleTimeoutSeconds has passed, busy or not.
	// +optional
	Force *bool `json:"force,omitempty"`
}

// InferenceServiceStatus is what the operator observed.
type InferenceServiceStatus struct {
	// conditions: Ready, Progressing, Degraded, RolloutDeferred, GatewayReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the status speaks of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// readyReplicas of the Deployment.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// endpoint is the in-cluster URL of the model's API.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// phase summarizes the conditions.
	// +optional
	Phase Phase `json:"phase,omitempty"`
}

// InferenceService serves one model with one runtime.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=isvc,categories=llmkube
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.runtime`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
// +kubebuilder:printcolumn:name="Gateway",type=string,JSONPath=`.status.conditions[?(@.type=="GatewayReady")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type InferenceService struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec InferenceServiceSpec `json:"spec"`
	// +optional
	Status InferenceServiceStatus `json:"status,omitempty"`
}

// InferenceServiceList is a list of InferenceServices.
// +kubebuilder:object:root=true
type InferenceServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InferenceService `json:"items"`
}

func init() {
	SchemeBuilder.Register(&InferenceService{}, &InferenceServiceList{})
}
