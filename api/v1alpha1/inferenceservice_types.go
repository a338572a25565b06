/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Runtime is the inference server an InferenceService runs.
// +kubebuilder:validation:Enum=llamacpp;llamacpp-router;vllm;tgi;sglang;personaplex;generic
type Runtime string

const (
	RuntimeLlamaCPP Runtime = "llamacpp"
	// RuntimeLlamaCPPRouter is LLMKube's llama.cpp router mode (several models in one server); accepted, and reported Stalled (UnservedField).
	RuntimeLlamaCPPRouter Runtime = "llamacpp-router"
	RuntimeVLLM           Runtime = "vllm"
	RuntimeTGI            Runtime = "tgi"
	RuntimeSGLang         Runtime = "sglang"
	RuntimePersonaPlex    Runtime = "personaplex"
	RuntimeGeneric        Runtime = "generic"
)

// InferenceServiceSpec describes one model served by one inference runtime.
//
// +kubebuilder:validation:XValidation:rule="has(self.model) != has(self.modelRef)",message="exactly one of spec.model and spec.modelRef must be set: spec.model names the model inline, spec.modelRef names a Model in the same namespace"
// +kubebuilder:validation:XValidation:rule="self.runtime != 'generic' || has(self.image)",message="spec.image is required when runtime is generic: the operator knows no default image for it"
type InferenceServiceSpec struct {
	// runtime is the inference server that loads and serves the model: llamacpp, vllm, tgi, sglang, personaplex or generic. The operator knows the default image, port, arguments and health check of each runtime except generic, which needs spec.image and usually spec.args. Defaults to llamacpp.
	// +optional
	// +kubebuilder:default=llamacpp
	Runtime Runtime `json:"runtime,omitempty"`

	// model says which model the runtime loads, inline. Exactly one of model and modelRef is set.
	// +optional
	Model ModelSpec `json:"model,omitzero"`

	// modelRef is the name of a Model in the same namespace that says which model the runtime loads, with its token Secret and hardware, as LLMKube's InferenceService names it. Exactly one of model and modelRef is set. While the Model does not exist, the ModelResolved condition is False, no Deployment is created and an existing one is left as it is. At most 253 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ModelRef string `json:"modelRef,omitempty"`

	// modelCache is the volume the runtime downloads the model into, mounted in the runtime container with the runtime's own cache variable (LLAMA_CACHE for llamacpp, HF_HOME for vllm, tgi, sglang and personaplex) pointing at it, so a restarted or added pod finds the weights already there. When unset: with modelRef, a Cached claim of the Model; with model, no cache volume.
	// +optional
	ModelCache *ModelCacheSpec `json:"modelCache,omitempty"`

	// skipModelInit is LLMKube's switch for its download init container. The operator runs no such container: the runtime always downloads the model itself, into the cache volume. Accepted for compatibility; true and false both mean that.
	// +optional
	SkipModelInit *bool `json:"skipModelInit,omitempty"`

	// image is the container image of the runtime, replacing the runtime's default image. When set, the operator no longer overrides the image's entrypoint. Required when runtime is generic. At most 1024 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image *string `json:"image,omitempty"`

	// args are the runtime's arguments, replacing the ones the operator builds from the model source and port. Use it when the runtime needs flags the operator does not know; extraArgs is appended after it. When unset, the operator builds the arguments. At most 256 items.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Args []string `json:"args,omitempty"`

	// extraArgs are appended to the runtime's arguments (the ones the operator builds, or args), for example to set a context size. At most 256 items.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	ExtraArgs []string `json:"extraArgs,omitempty"`

	// env sets environment variables of the runtime container, in the same form as a container's env. Entries are merged by name, so several tools can each manage their own variables. At most 128 items.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Env []corev1.EnvVar `json:"env,omitempty"`

	// replicas is the number of runtime pods. It is ignored when autoscaling is set, as the HorizontalPodAutoscaler then decides. Defaults to 1; 0 stops every pod while keeping the Service.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// containerPort is the port the runtime listens on inside the pod; probes and the Service's target port use it. Defaults to endpoint.port when that is set, else to the runtime's default port (8080 for llamacpp, 8000 for vllm, 80 for tgi, 30000 for sglang, 8998 for personaplex). Between 1 and 65535.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ContainerPort *int32 `json:"containerPort,omitempty"`

	// endpoint says how the model's API is exposed: the Service's port and type, and the API path shown in status.endpoint. When unset, a ClusterIP Service on the container port.
	// +optional
	Endpoint *EndpointSpec `json:"endpoint,omitempty"`

	// resources is the compute the runtime container asks for: GPUs, CPU and memory. When unset, the container has no requests or limits.
	// +optional
	Resources *ResourceSpec `json:"resources,omitempty"`

	// podLabels are added to the labels of the runtime pods, for example for cost allocation or a PodMonitor. The operator's own labels win on a clash, and the keys the operator selects pods by (app and inference.llmkube.dev/service) are rejected. At most 64 labels; keys and values follow the Kubernetes label syntax.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",messageExpression="'spec.podLabels has an invalid label key: ' + self.filter(k, format.qualifiedName().validate(k).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	// +kubebuilder:validation:XValidation:rule="!('app' in self)",message="spec.podLabels must not set app: the operator reserves it for the Deployment and Service selector"
	// +kubebuilder:validation:XValidation:rule="!('inference.llmkube.dev/service' in self)",message="spec.podLabels must not set inference.llmkube.dev/service: the operator reserves it for the Deployment and Service selector"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k == 'inference.llmkube.dev/service' || !k.startsWith('inference.llmkube.dev/'))",messageExpression="'spec.podLabels must not set ' + self.filter(k, k != 'inference.llmkube.dev/service' && k.startsWith('inference.llmkube.dev/'))[0] + ': keys under inference.llmkube.dev/ are the operator\\'s own, and it would overwrite yours; use a prefix of your own, such as example.com/team'"
	PodLabels map[string]LabelValue `json:"podLabels,omitempty"`

	// podAnnotations are added to the annotations of the runtime pods. They win over the operator's own annotations, such as karpenter.sh/do-not-disrupt and the prometheus.io scrape hints. At most 64 annotations; keys follow the Kubernetes annotation key syntax.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k.lowerAscii()).hasValue())",messageExpression="'spec.podAnnotations has an invalid annotation key: ' + self.filter(k, format.qualifiedName().validate(k.lowerAscii()).hasValue())[0] + ' (a key is an optional DNS subdomain prefix and a slash, then at most 63 characters: alphanumerics, -, _ or ., starting and ending with an alphanumeric)'"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// nodeSelector schedules the runtime pods only on nodes that carry all of these labels, for example a GPU node pool.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the runtime pods run on nodes with matching taints, as in a pod's spec.tolerations. The list is replaced as a whole on every apply, since a toleration has no key that identifies it.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// imagePullSecrets name Secrets in the same namespace that hold credentials for pulling the runtime image from a private registry.
	// +optional
	// +listType=map
	// +listMapKey=name
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// podSecurityContext is the security context of the runtime pods, as in a pod's spec.securityContext. When it or securityContext sets runAsNonRoot, the operator also drops every capability, forbids privilege escalation and applies the RuntimeDefault seccomp profile.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// securityContext is the security context of the runtime container, as in a container's securityContext.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// autoscaling creates a HorizontalPodAutoscaler for the runtime Deployment; the operator then leaves the replica count to it and ignores replicas. When unset, there is no autoscaler.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// disruption says when the runtime pods carry karpenter.sh/do-not-disrupt, which keeps Karpenter from evicting them to consolidate nodes. When unset, pods are protected until they are Ready.
	// +optional
	Disruption *DisruptionSpec `json:"disruption,omitempty"`

	// rolloutPolicy says when a change that replaces the runtime pods (a new image, arguments or resources) rolls out. When unset, changes roll out at once.
	// +optional
	RolloutPolicy *RolloutPolicy `json:"rolloutPolicy,omitempty"`

	// revisionHistoryLimit is how many old ReplicaSets the runtime Deployment keeps for a rollback. Defaults to the Deployment's default, 10.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// gateway serves the model through Gateways that implement the Gateway API Inference Extension: the operator creates an InferencePool that selects the runtime pods and an HTTPRoute that attaches the pool to the Gateways, both named like the InferenceService. Removing gateway deletes both. When unset, no gateway objects exist.
	// +optional
	Gateway *GatewaySpec `json:"gateway,omitempty"`

	// Maintainers: LLMKube's InferenceService fields (llmkube_types.go).

	LLMKubeInferenceServiceFields `json:",inline"`
}

// ModelCachePersistence says how long a model cache lives.
// +kubebuilder:validation:Enum=Cached;Ephemeral
type ModelCachePersistence string

const (
	// ModelCacheCached is a PersistentVolumeClaim that outlives the pods.
	ModelCacheCached ModelCachePersistence = "Cached"
	// ModelCacheEphemeral is an emptyDir that lives as long as its pod.
	ModelCacheEphemeral ModelCachePersistence = "Ephemeral"
)

// ModelCacheSpec is the volume the runtime downloads the model into.
//
// +kubebuilder:validation:XValidation:rule="!has(self.claimName) || (!has(self.persistence) && !has(self.size) && !has(self.storageClassName))",message="spec.modelCache.claimName names a claim you made: it excludes persistence, size and storageClassName"
// +kubebuilder:validation:XValidation:rule="!has(self.persistence) || self.persistence != 'Ephemeral' || !has(self.storageClassName)",message="spec.modelCache.storageClassName needs persistence Cached: an Ephemeral cache is an emptyDir"
type ModelCacheSpec struct {
	// persistence is Cached, a PersistentVolumeClaim the operator applies that outlives the pods (with modelRef it belongs to the Model, so it outlives the InferenceService too and every InferenceService of that Model shares it; with model it belongs to the InferenceService), or Ephemeral, an emptyDir that lives as long as its pod. Defaults to Cached.
	// +optional
	Persistence *ModelCachePersistence `json:"persistence,omitempty"`

	// claimName names a PersistentVolumeClaim you made, in the same namespace, to use as the cache instead of one the operator applies; use it for a ReadWriteMany claim shared by pods on several nodes. At most 253 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClaimName *string `json:"claimName,omitempty"`

	// size is the storage the Cached claim requests, or the size limit of the Ephemeral emptyDir. A claim can grow where its storage class allows expansion, never shrink. Defaults to 50Gi for a Cached claim and no limit for an emptyDir.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// storageClassName is the storage class of the Cached claim. It cannot change once the claim exists. When unset, the cluster's default storage class.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// ModelSpec says which model the runtime loads.
type ModelSpec struct {
	// source is where the model comes from: a Hugging Face repository id (org/name), hf://org/repo or hf://org/repo/file for one file of a repository, an https:// URL, or an absolute path on a volume mounted in the pod. The operator turns it into the runtime's own arguments. At most 2048 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+(/[!-~]+)?|https://[-A-Za-z0-9.:@]+(/[!-~]*)?|/[!-~]*|[A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+)$')",message="spec.model.source must be a Hugging Face repo id (org/name), hf://org/repo[/file], an https:// URL, or an absolute path on a mounted volume"
	Source string `json:"source"`
}

// EndpointSpec says how an API is exposed inside the cluster.
type EndpointSpec struct {
	// port is the port of the Service. Defaults to the port the server listens on. Between 1 and 65535.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// path is the path of the API under the port, for example /v1; it only changes the URL shown in status.endpoint. Starts with a slash; at most 256 characters. Defaults to no path.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/`
	Path *string `json:"path,omitempty"`

	// type is the type of the Service: ClusterIP, NodePort or LoadBalancer. Defaults to ClusterIP.
	// +optional
	Type *ServiceType `json:"type,omitempty"`

	// nodePort is the node port of a NodePort or LoadBalancer Service (LLMKube's field). When unset, Kubernetes picks one.
	// +optional
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	NodePort *int32 `json:"nodePort,omitempty"`

	// gateway is LLMKube's route through one Gateway. Not served in this form: the InferenceService reports Stalled=True (UnservedField) while it is enabled; spec.gateway routes through the Gateway API Inference Extension.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Gateway *apiextensionsv1.JSON `json:"gateway,omitempty"`
}

// ResourceSpec is the compute a runtime container asks for.
type ResourceSpec struct {
	// gpu is the number of nvidia.com/gpu the container requests and is limited to. With one or more GPUs, the Deployment replaces pods with the Recreate strategy instead of a rolling update, since two copies of a model rarely fit on one node. Between 0 and 64; defaults to none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	GPU *int32 `json:"gpu,omitempty"`

	// cpu is the CPU the container requests, as a quantity such as 4 or 500m. No limit is set, so the container can use idle CPU.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// memory is the memory the container requests and is limited to, as a quantity such as 16Gi.
	// +optional
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",messageExpression="'spec.resources.memory ' + string(self) + ' is not a quantity: write a number and a unit, Ki, Mi, Gi or Ti (powers of 1024) or k, M, G or T (powers of 1000), such as 16Gi; 16GB has no unit B'"
	Memory *resource.Quantity `json:"memory,omitempty"`

	// Maintainers: LLMKube's resources fields (llmkube_types.go).

	LLMKubeResourceFields `json:",inline"`
}

// AutoscalingSpec configures the HorizontalPodAutoscaler of an InferenceService.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="spec.autoscaling.minReplicas must not be greater than spec.autoscaling.maxReplicas"
type AutoscalingSpec struct {
	// minReplicas is the fewest runtime pods the autoscaler keeps. At least 1 and at most maxReplicas; defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the most runtime pods the autoscaler starts. At least 1.
	// +required
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// metrics the autoscaler scales on, in the form of a HorizontalPodAutoscaler's spec.metrics, or in LLMKube's short form (type Pods or Resource with name and targetAverageValue or targetAverageUtilization). Defaults to an average CPU utilization of 80%.
	// +optional
	// +listType=atomic
	Metrics []AutoscalingMetric `json:"metrics,omitempty"`
}

// AutoscalingMetric is one metric of a HorizontalPodAutoscaler's spec.metrics, or LLMKube's short
// form of one.
//
// +kubebuilder:validation:XValidation:rule="!has(self.name) || (!has(self.pods) && !has(self.resource) && !has(self.object) && !has(self.external) && !has(self.containerResource))",message="spec.autoscaling.metrics[]: name (LLMKube's short form) excludes pods, resource, object, external and containerResource: write one form"
// +kubebuilder:validation:XValidation:rule="!has(self.name) || self.type == 'Pods' || self.type == 'Resource'",message="spec.autoscaling.metrics[]: LLMKube's short form (name) takes type Pods or Resource"
type AutoscalingMetric struct {
	// type is the kind of metric: Object, Pods, Resource, ContainerResource or External, as in a HorizontalPodAutoscaler.
	// +required
	Type autoscalingv2.MetricSourceType `json:"type"`
	// object is a HorizontalPodAutoscaler's object metric.
	// +optional
	Object *autoscalingv2.ObjectMetricSource `json:"object,omitempty"`
	// pods is a HorizontalPodAutoscaler's pods metric.
	// +optional
	Pods *autoscalingv2.PodsMetricSource `json:"pods,omitempty"`
	// resource is a HorizontalPodAutoscaler's resource metric.
	// +optional
	Resource *autoscalingv2.ResourceMetricSource `json:"resource,omitempty"`
	// containerResource is a HorizontalPodAutoscaler's container resource metric.
	// +optional
	ContainerResource *autoscalingv2.ContainerResourceMetricSource `json:"containerResource,omitempty"`
	// external is a HorizontalPodAutoscaler's external metric.
	// +optional
	External *autoscalingv2.ExternalMetricSource `json:"external,omitempty"`

	// name is LLMKube's short form: the Pods metric or the resource (cpu, memory) to scale on.
	// +optional
	Name string `json:"name,omitempty"`

	// targetAverageValue is LLMKube's short form: the average value per pod to keep, such as "2".
	// +optional
	TargetAverageValue *string `json:"targetAverageValue,omitempty"`

	// targetAverageUtilization is LLMKube's short form: the average utilization in percent of a Resource metric.
	// +optional
	TargetAverageUtilization *int32 `json:"targetAverageUtilization,omitempty"`
}

// DisruptionSpec says when the runtime pods carry karpenter.sh/do-not-disrupt.
type DisruptionSpec struct {
	// protectStartup protects pods that are not Ready yet, while they download and load the model, so a node consolidation does not throw that work away. Defaults to true.
	// +optional
	ProtectStartup *bool `json:"protectStartup,omitempty"`

	// protectAlways protects the pods for their whole life, not only during startup. Defaults to false.
	// +optional
	ProtectAlways *bool `json:"protectAlways,omitempty"`
}

// RolloutPolicy says when a change that replaces the runtime pods rolls out.
type RolloutPolicy struct {
	// waitForIdle holds back a change that would replace the runtime pods until no pod is processing a request, as reported by the runtime's metrics; the RolloutDeferred condition says why it waits. Runtimes that report no such metric (personaplex, generic) only roll with force. Defaults to false: changes roll out at once.
	// +optional
	WaitForIdle *bool `json:"waitForIdle,omitempty"`

	// idleTimeoutSeconds is how long a change waits for idle pods. After it, the change rolls out when force is true, and keeps waiting otherwise. At least 1; defaults to waiting without a limit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	IdleTimeoutSeconds *int32 `json:"idleTimeoutSeconds,omitempty"`

	// force rolls the change out once idleTimeoutSeconds has passed, even while requests are in flight; with a runtime that reports no in-flight metric, it rolls out at once. Defaults to false.
	// +optional
	Force *bool `json:"force,omitempty"`
}

// LoadedModel names a Model at one generation.
type LoadedModel struct {
	// name is the Model's name.
	// +required
	Name string `json:"name"`
	// generation is the Model's metadata.generation.
	// +required
	Generation int64 `json:"generation"`
}

// InferenceServiceStatus is the state of an InferenceService as the operator last observed it.
type InferenceServiceStatus struct {
	// conditions are the detailed state: Ready (a replica serves requests), Progressing (a rollout is under way), Reconciling (kstatus: the current generation is not realized yet), Stalled (kstatus: it cannot be without a person's change), Degraded (the operator could not apply the desired state; the message quotes the API server and says what to do), RolloutDeferred (a change waits for idle pods), GatewayReady (with spec.gateway: whether every Gateway accepted the route and the pool) and ModelResolved (with modelRef: whether the Model exists).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation of the spec this status describes; when it is behind, the operator has not seen the latest change yet.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// loadedModel is the Model (spec.modelRef) and its generation that every pod of the rolled-out template runs: it moves once a rollout that carries a changed or another Model is done, so a Model reports Loaded for a generation only when pods of that generation serve.
	// +optional
	LoadedModel *LoadedModel `json:"loadedModel,omitempty"`

	// readyReplicas is the number of runtime pods that are ready to serve requests.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// ready is the number of ready runtime pods out of the number wanted, such as 0/1, as kubectl get shows it for a Deployment.
	// +optional
	Ready string `json:"ready,omitempty"`

	// endpoint is the in-cluster URL of the model's API, for example http://name.namespace.svc.cluster.local:8080/v1.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// phase is a one-word summary of the conditions: Pending, Progressing, Ready or Degraded.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// model is what the runtime serves, in short: the Model spec.modelRef names, or the inline spec.model.source without its scheme, such as org/repo/model.gguf.
	// +optional
	Model string `json:"model,omitempty"`

	// replicas is the number of runtime pods, as the scale subresource reports it (kubectl scale, and a HorizontalPodAutoscaler that targets the InferenceService).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// selector is the label selector of the runtime pods, in the string form the scale subresource reports, such as app=name,inference.llmkube.dev/service=name.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// InferenceService serves one model with one inference runtime: the operator runs it as a Deployment behind a Service, with an optional HorizontalPodAutoscaler.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=isvc,categories=llmkube
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.runtime`
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=`.status.model`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.ready`
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
