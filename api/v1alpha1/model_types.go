/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModelFormat is the file format of a model's weights.
// +kubebuilder:validation:Enum=gguf;mlx;safetensors;pytorch;custom
type ModelFormat string

const (
	ModelFormatGGUF        ModelFormat = "gguf"
	ModelFormatSafetensors ModelFormat = "safetensors"
	// ModelFormatMLX is Apple's MLX format, which LLMKube serves on its macOS agent: an
	// InferenceService of such a Model reports Stalled=True (UnservedField).
	ModelFormatMLX ModelFormat = "mlx"
)

// Maintainers: the Go names ModelKindSpec and ModelKindStatus keep ModelSpec free for the
// InferenceService's inline spec.model; the JSON field names follow LLMKube's Model so its
// manifests apply unchanged. Fields LLMKube has and this operator does not support are declared in
// llmkube_types.go.

// ModelKindSpec describes a model that InferenceServices refer to by name with spec.modelRef.
type ModelKindSpec struct {
	// source is where the model comes from: a Hugging Face repository id (org/name), hf://org/repo or hf://org/repo/file for one file of a repository, an https:// URL, or an absolute path on a volume mounted in the pod. Every InferenceService that refers to this Model passes it to its runtime, as spec.model.source would. At most 2048 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+(/[!-~]+)?|https://[-A-Za-z0-9.:@]+(/[!-~]*)?|/[!-~]*|[A-Za-z0-9][-A-Za-z0-9_.]*/[-A-Za-z0-9_.]+)$') || self.matches('^(https?|file|pvc|hf|s3)://.*|^/[^[:space:]]+$|^[a-zA-Z0-9][0-9A-Za-z_./-]+$')",message="spec.source must be a Hugging Face repo id (org/name), hf://org/repo[/file], an http(s):// URL, file:///path or an absolute path on a mounted volume, pvc://claim/path, or s3://bucket/key"
	Source string `json:"source"`

	// sourceSecretRef names a Secret in the same namespace that holds a Hugging Face token, for gated or private models. The runtime container gets it as the HF_TOKEN environment variable by reference; the operator never reads the Secret. When unset, the model is downloaded without a token.
	// +optional
	SourceSecretRef *SecretKeyReference `json:"sourceSecretRef,omitempty"`

	// format is the file format of the weights: gguf (llama.cpp), safetensors or pytorch (vLLM, TGI, SGLang), custom, or mlx (LLMKube's macOS agent: an InferenceService of an mlx Model reports Stalled=True, UnservedField, since no runtime on a Kubernetes node loads it). With gguf and a Hugging Face repository source that names no file, the first entry of files is the file llama.cpp loads. When unset, the format is not checked.
	// +optional
	Format ModelFormat `json:"format,omitempty"`

	// quantization is the quantization level of the weights, such as Q4_K_M or Q8_0. It is informational: the runtime reads the quantization from the weights themselves. At most 64 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Quantization string `json:"quantization,omitempty"`

	// files are the files of a Hugging Face repository the model consists of. With format gguf and a repository source that names no file, the first entry is the file llama.cpp loads; other runtimes load the whole repository. At most 64 items of at most 1024 characters each.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=1024
	Files []string `json:"files,omitempty"`

	// hardware says what accelerators the model needs. Its GPU count becomes the GPU count of an InferenceService that sets none. When unset, the model needs no GPU.
	// +optional
	Hardware *ModelHardware `json:"hardware,omitempty"`

	// resources is the CPU and memory the runtime container asks for when the InferenceService's spec.resources sets none. When unset, the InferenceService alone decides.
	// +optional
	Resources *ModelResources `json:"resources,omitempty"`

	// Maintainers: LLMKube's Model fields (llmkube_types.go).

	LLMKubeModelFields `json:",inline"`
}

// SecretKeyReference names one key of a Secret in the same namespace.
type SecretKeyReference struct {
	// name is the name of the Secret, in the same namespace. At most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key is the key of the Secret that holds the token. Defaults to HF_TOKEN. At most 253 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key *string `json:"key,omitempty"`
}

// ModelHardware says what accelerators a model needs.
type ModelHardware struct {
	// accelerator is the kind of accelerator the model is built for: cpu, cuda, rocm, intel, vulkan, or metal (Apple GPUs, which LLMKube serves on its macOS agent: an InferenceService of a metal Model reports Stalled=True, UnservedField). intel requests gpu.intel.com/i915 as vendor intel does; otherwise it is informational and GPUs are requested by gpu. When unset, nothing is assumed.
	// +optional
	// +kubebuilder:validation:Enum=cpu;metal;cuda;rocm;intel;vulkan
	Accelerator string `json:"accelerator,omitempty"`

	// gpu says how many GPUs of which kind the runtime needs.
	// +optional
	GPU *ModelGPU `json:"gpu,omitempty"`

	// Maintainers: LLMKube's hardware fields (llmkube_types.go).

	LLMKubeHardwareFields `json:",inline"`
}

// ModelGPU says how many GPUs of which kind a model needs.
type ModelGPU struct {
	// enabled says the model runs on GPUs. When true and count is unset, one GPU. Defaults to false.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// count is the number of GPUs each runtime pod requests, used when the InferenceService's spec.resources.gpu is unset. Between 0 and 64; when unset, one GPU if enabled, else none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	Count *int32 `json:"count,omitempty"`

	// vendor is the GPU vendor: nvidia (the extended resource nvidia.com/gpu), amd (amd.com/gpu) or intel (gpu.intel.com/i915). Defaults to nvidia.
	// +optional
	// +kubebuilder:validation:Enum=nvidia;amd;intel
	Vendor string `json:"vendor,omitempty"`

	// resourceName is the extended resource the GPUs are requested as, replacing the one vendor implies, for example nvidia.com/mig-1g.5gb. At most 253 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	ResourceName string `json:"resourceName,omitempty"`

	// Maintainers: LLMKube's gpu fields (llmkube_types.go).

	LLMKubeGPUFields `json:",inline"`
}

// ModelResources is the CPU and memory a model's runtime container asks for.
type ModelResources struct {
	// cpu is the CPU the runtime container requests, as a quantity such as 4 or 500m, when the InferenceService sets none.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// memory is the memory the runtime container requests and is limited to, as a quantity such as 16Gi, when the InferenceService sets none.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// ModelKindStatus is the state of a Model as the operator last observed it.
type ModelKindStatus struct {
	// conditions are the detailed state: Accepted (the spec passed admission and the operator saw it) and Ready (an InferenceService that names the Model has a ready pod, so its weights were downloaded and loaded; reason NotInUse when no InferenceService names it, Loading while none of those that do has a ready pod).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation of the spec this status describes; when it is behind, the operator has not seen the latest change yet.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is a one-word summary of the conditions: Pending (nothing has loaded the Model yet) or Ready.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// inferenceServices is the number of InferenceServices in the namespace whose spec.modelRef names this Model.
	// +optional
	InferenceServices int32 `json:"inferenceServices"`

	// readyInferenceServices is the number of those whose runtime has at least one ready pod at their current generation.
	// +optional
	ReadyInferenceServices int32 `json:"readyInferenceServices"`

	// usedBy are the names of the InferenceServices that name this Model, sorted; the first 16 when there are more (inferenceServices has the count).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	UsedBy []string `json:"usedBy,omitempty"`
}

// Model is a model that InferenceServices serve by naming it in spec.modelRef: its source, its token Secret and the hardware it needs. Its cache claim (spec.modelCache of an InferenceService) belongs to it, so the downloaded weights outlive every InferenceService and are shared by all of them.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mdl,categories=llmkube
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`
// +kubebuilder:printcolumn:name="Format",type=string,JSONPath=`.spec.format`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Used-By",type=integer,JSONPath=`.status.inferenceServices`,description="InferenceServices that name this Model"
// +kubebuilder:printcolumn:name="Serving",type=integer,JSONPath=`.status.readyInferenceServices`,description="of those, the ones with a ready pod"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Model struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ModelKindSpec `json:"spec"`
	// +optional
	Status ModelKindStatus `json:"status,omitempty"`
}

// ModelList is a list of Models.
// +kubebuilder:object:root=true
type ModelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Model `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Model{}, &ModelList{})
}
