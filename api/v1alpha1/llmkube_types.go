/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Maintainers: fields of LLMKube's InferenceService and Model that this operator does not support.
// They are declared, with LLMKube's types, only so that admission can reject them with a message that names
// the field and says what to use instead: an undeclared field would be pruned (and a field without
// a type is invisible to the rules), and a client that
// does not ask for strict field validation would see it silently dropped. The rules that reject
// them sit on the struct that embeds each group (InferenceServiceSpec, ResourceSpec, ModelKindSpec,
// ModelHardware, ModelGPU). docs/models.md lists every field.

// LLMKubeInferenceServiceFields are LLMKube's fields of spec that admission rejects.
type LLMKubeInferenceServiceFields struct {
	// contextSize is LLMKube's field for the llama.cpp context size. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	ContextSize *int64 `json:"contextSize,omitempty"`

	// parallelSlots is LLMKube's field for the llama.cpp number of request slots. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	ParallelSlots *int64 `json:"parallelSlots,omitempty"`

	// flashAttention is LLMKube's field for the llama.cpp flash attention switch. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	FlashAttention *bool `json:"flashAttention,omitempty"`

	// jinja is LLMKube's field for the llama.cpp chat template switch. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	Jinja *bool `json:"jinja,omitempty"`

	// cacheTypeK is LLMKube's field for the llama.cpp key cache type. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	CacheTypeK *string `json:"cacheTypeK,omitempty"`

	// cacheTypeV is LLMKube's field for the llama.cpp value cache type. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	CacheTypeV *string `json:"cacheTypeV,omitempty"`

	// moeCPUOffload is LLMKube's field for the llama.cpp expert offload switch. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	MoeCPUOffload *bool `json:"moeCPUOffload,omitempty"`

	// moeCPULayers is LLMKube's field for the llama.cpp number of expert layers on the CPU. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	MoeCPULayers *int64 `json:"moeCPULayers,omitempty"`

	// noKvOffload is LLMKube's field for the llama.cpp switch that keeps the KV cache in host memory. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	NoKvOffload *bool `json:"noKvOffload,omitempty"`

	// tensorOverrides is LLMKube's field for the llama.cpp tensor placement overrides. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +listType=atomic
	TensorOverrides []string `json:"tensorOverrides,omitempty"`

	// batchSize is LLMKube's field for the llama.cpp batch size. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	BatchSize *int64 `json:"batchSize,omitempty"`

	// uBatchSize is LLMKube's field for the llama.cpp micro-batch size. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	UBatchSize *int64 `json:"uBatchSize,omitempty"`

	// command is LLMKube's field for the container entrypoint. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// probeOverrides is LLMKube's field for the replacement health probes. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +kubebuilder:validation:Type=object
	ProbeOverrides *apiextensionsv1.JSON `json:"probeOverrides,omitempty"`

	// personaPlexConfig is LLMKube's field for the PersonaPlex settings. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +kubebuilder:validation:Type=object
	PersonaPlexConfig *apiextensionsv1.JSON `json:"personaPlexConfig,omitempty"`

	// vllmConfig is LLMKube's field for the vLLM settings. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +kubebuilder:validation:Type=object
	VLLMConfig *apiextensionsv1.JSON `json:"vllmConfig,omitempty"`

	// tgiConfig is LLMKube's field for the TGI settings. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +kubebuilder:validation:Type=object
	TGIConfig *apiextensionsv1.JSON `json:"tgiConfig,omitempty"`

	// priority is LLMKube's field for the scheduling priority level. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	Priority *string `json:"priority,omitempty"`

	// priorityClassName is LLMKube's field for the pods' PriorityClass. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	PriorityClassName *string `json:"priorityClassName,omitempty"`
}

// LLMKubeResourceFields are LLMKube's fields of spec.resources that admission rejects.
type LLMKubeResourceFields struct {
	// gpuMemory is LLMKube's field for the GPU memory per pod. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	GPUMemory *string `json:"gpuMemory,omitempty"`

	// hostMemory is LLMKube's field for the host memory for offloading. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	HostMemory *string `json:"hostMemory,omitempty"`
}

// LLMKubeModelFields are LLMKube's fields of spec that admission rejects.
type LLMKubeModelFields struct {
	// sha256 is LLMKube's field for the expected hash of the model file. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	SHA256 *string `json:"sha256,omitempty"`
}

// LLMKubeHardwareFields are LLMKube's fields of spec.hardware that admission rejects.
type LLMKubeHardwareFields struct {
	// memoryBudget is LLMKube's field for the memory limit of the model process. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	MemoryBudget *string `json:"memoryBudget,omitempty"`

	// memoryFraction is LLMKube's field for the share of host memory for the model process. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +kubebuilder:validation:Type=number
	MemoryFraction *apiextensionsv1.JSON `json:"memoryFraction,omitempty"`
}

// LLMKubeGPUFields are LLMKube's fields of spec.hardware.gpu that admission rejects.
type LLMKubeGPUFields struct {
	// memory is LLMKube's field for the GPU memory the model needs. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	Memory *string `json:"memory,omitempty"`

	// layers is LLMKube's field for the number of layers offloaded to GPUs. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	Layers *int64 `json:"layers,omitempty"`

	// sharding is LLMKube's field for how the model is split across GPUs. It is not supported: admission rejects it with a message that says what to use instead.
	// +optional
	// +kubebuilder:validation:Type=object
	Sharding *apiextensionsv1.JSON `json:"sharding,omitempty"`
}
