/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Maintainers: LLMKube v0.9.19's fields of InferenceService and Model, with LLMKube's names,
// types and enums, so that every manifest LLMKube accepts applies here unchanged (strict field
// validation included) and an object LLMKube's operator stored keeps every field it had. Each is
// served: controllers/runtimes turns it into the runtime's flags, and the InferenceService's plan
// into resources, scheduling and volumes. A field this operator cannot serve (docs/models.md lists
// them) is accepted all the same, and the plan is then blocked with Stalled=True and the
// reason UnservedField, naming the field and what would serve it: no LLMKube field is refused at
// admission, and none is ignored in silence. Where the API already had a way (extraArgs, args),
// the LLMKube field and that way must agree: the rules on InferenceServiceSpec refuse a flag set
// by both, naming both.
//
// Groups that only stall (speculativeDecoding, sglangConfig, slo, ...) are stored as JSON
// objects that keep every field, so an upgrade loses none of them and a later version can serve
// them from what is stored.

// LLMKubeInferenceServiceFields are LLMKube's fields of an InferenceService's spec.
type LLMKubeInferenceServiceFields struct {
	// mode is what llama.cpp serves: chat (the default), embedding (--embedding --pooling last) or rerank (--reranking --embedding --pooling rank); both of the latter also set --cache-ram 0, since llama.cpp's prompt cache is only read for completions. Only llamacpp serves embedding and rerank.
	// +optional
	// +kubebuilder:validation:Enum=chat;embedding;rerank
	Mode string `json:"mode,omitempty"`

	// suspend scales the runtime to zero pods while true and back to spec.replicas when false, keeping the Service, the cache and every setting. Defaults to false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// topologySpreadConstraints of the runtime pods, as in a pod's spec.
	// +optional
	// +listType=atomic
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// affinity of the runtime pods, as in a pod's spec.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// runtimeClassName of the runtime pods, such as nvidia where the GPU runtime is not the node's default.
	// +optional
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`

	// contextSize is llama.cpp's --ctx-size, vLLM's --max-model-len when vllmConfig.maxModelLen is unset, and TGI's --max-total-tokens when tgiConfig.maxTotalTokens is unset.
	// +optional
	ContextSize *int32 `json:"contextSize,omitempty"`

	// ropeScaling is llama.cpp's RoPE scaling: --rope-scaling, --rope-scale and --yarn-orig-ctx.
	// +optional
	RopeScaling *RopeScalingSpec `json:"ropeScaling,omitempty"`

	// parallelSlots is how many requests the server decodes at once: llama.cpp's --parallel, vLLM's --max-num-seqs.
	// +optional
	ParallelSlots *int32 `json:"parallelSlots,omitempty"`

	// flashAttention turns on llama.cpp's --flash-attn on where the pod has GPUs; on a CPU pod it changes nothing, as with LLMKube.
	// +optional
	FlashAttention *bool `json:"flashAttention,omitempty"`

	// jinja makes llama.cpp use the model's Jinja chat template (--jinja), which tool calls need.
	// +optional
	Jinja *bool `json:"jinja,omitempty"`

	// cacheTypeK is llama.cpp's --cache-type-k; cacheTypeCustomK replaces it.
	// +optional
	// +kubebuilder:validation:Enum=f16;f32;q8_0;q4_0;q4_1;q5_0;q5_1;iq4_nl
	CacheTypeK string `json:"cacheTypeK,omitempty"`

	// cacheTypeV is llama.cpp's --cache-type-v; cacheTypeCustomV replaces it.
	// +optional
	// +kubebuilder:validation:Enum=f16;f32;q8_0;q4_0;q4_1;q5_0;q5_1;iq4_nl
	CacheTypeV string `json:"cacheTypeV,omitempty"`

	// cacheTypeCustomK is a --cache-type-k value outside cacheTypeK's list, for builds of llama.cpp that have more (such as turbo3).
	// +optional
	CacheTypeCustomK string `json:"cacheTypeCustomK,omitempty"`

	// cacheTypeCustomV is a --cache-type-v value outside cacheTypeV's list.
	// +optional
	CacheTypeCustomV string `json:"cacheTypeCustomV,omitempty"`

	// moeCPUOffload keeps every mixture-of-experts weight in host memory: llama.cpp's --cpu-moe.
	// +optional
	MoeCPUOffload *bool `json:"moeCPUOffload,omitempty"`

	// moeCPULayers keeps the experts of this many layers in host memory: llama.cpp's --n-cpu-moe.
	// +optional
	MoeCPULayers *int32 `json:"moeCPULayers,omitempty"`

	// noKvOffload keeps the KV cache in host memory: llama.cpp's --no-kv-offload.
	// +optional
	NoKvOffload *bool `json:"noKvOffload,omitempty"`

	// noWarmup skips llama.cpp's warm-up run at start (--no-warmup).
	// +optional
	NoWarmup *bool `json:"noWarmup,omitempty"`

	// speculativeDecoding is LLMKube's llama.cpp speculative decoding with a draft model. Not served: the InferenceService reports Stalled=True (UnservedField); put the flags in extraArgs instead.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	SpeculativeDecoding *apiextensionsv1.JSON `json:"speculativeDecoding,omitempty"`

	// reasoningBudget is llama.cpp's --reasoning-budget: the most tokens a model may think for, -1 without limit.
	// +optional
	ReasoningBudget *int32 `json:"reasoningBudget,omitempty"`

	// reasoningBudgetMessage is llama.cpp's --reasoning-budget-message, with reasoningBudget.
	// +optional
	ReasoningBudgetMessage string `json:"reasoningBudgetMessage,omitempty"`

	// metadataOverrides are llama.cpp's --override-kv values, one flag each.
	// +optional
	// +listType=atomic
	MetadataOverrides []string `json:"metadataOverrides,omitempty"`

	// tensorOverrides are llama.cpp's --override-tensor values, one flag each, such as exps=CPU.
	// +optional
	// +listType=atomic
	TensorOverrides []string `json:"tensorOverrides,omitempty"`

	// batchSize is llama.cpp's --batch-size.
	// +optional
	BatchSize *int32 `json:"batchSize,omitempty"`

	// uBatchSize is llama.cpp's --ubatch-size.
	// +optional
	UBatchSize *int32 `json:"uBatchSize,omitempty"`

	// turboQuantBits is LLMKube's TurboQuant KV cache for its macOS agent. Not served on a Kubernetes node: the InferenceService reports Stalled=True (UnservedField).
	// +optional
	// +kubebuilder:validation:Enum=3;6;8
	TurboQuantBits *int32 `json:"turboQuantBits,omitempty"`

	// pagedSSDCacheDir is LLMKube's paged SSD KV cache of its macOS agent. Not served on a Kubernetes node: Stalled=True (UnservedField).
	// +optional
	PagedSSDCacheDir *string `json:"pagedSSDCacheDir,omitempty"`

	// hotCacheMaxSize is LLMKube's in-memory tier of the paged SSD cache. Not served on a Kubernetes node: Stalled=True (UnservedField).
	// +optional
	HotCacheMaxSize *string `json:"hotCacheMaxSize,omitempty"`

	// pagedSSDCacheMaxSize is LLMKube's size of the paged SSD cache. Not served on a Kubernetes node: Stalled=True (UnservedField).
	// +optional
	PagedSSDCacheMaxSize *string `json:"pagedSSDCacheMaxSize,omitempty"`

	// command replaces the runtime container's entrypoint; spec.args (or the runtime's own arguments) follow it.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// extraVolumes are added to the runtime pods, as in a pod's spec.volumes. A name the operator uses itself (model-cache) is refused by the API server's validation of the Deployment, and reported in Degraded.
	// +optional
	// +listType=map
	// +listMapKey=name
	ExtraVolumes []corev1.Volume `json:"extraVolumes,omitempty"`

	// extraVolumeMounts are added to the runtime container, as in a container's volumeMounts.
	// +optional
	// +listType=atomic
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty"`

	// bindAddress is the address the server listens on. Defaults to :: (every IPv4 and IPv6 address, so a dual-stack or IPv6-only cluster reaches it).
	// +optional
	BindAddress string `json:"bindAddress,omitempty"`

	// probeOverrides replace the operator's startup, liveness and readiness probes of the runtime container, each as a whole.
	// +optional
	ProbeOverrides *ProbeOverrides `json:"probeOverrides,omitempty"`

	// personaPlexConfig is LLMKube's PersonaPlex settings. Not served: Stalled=True (UnservedField); put the flags in extraArgs.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	PersonaPlexConfig *apiextensionsv1.JSON `json:"personaPlexConfig,omitempty"`

	// vllmConfig are vLLM's settings, each its flag (docs/models.md lists them).
	// +optional
	VLLMConfig *VLLMConfig `json:"vllmConfig,omitempty"`

	// tgiConfig are TGI's settings, each its flag.
	// +optional
	TGIConfig *TGIConfig `json:"tgiConfig,omitempty"`

	// sglangConfig is LLMKube's SGLang settings. Not served: Stalled=True (UnservedField); put the flags in extraArgs.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	SGLangConfig *apiextensionsv1.JSON `json:"sglangConfig,omitempty"`

	// priority is LLMKube's queueing priority among InferenceServices waiting for GPUs: critical, high, normal, low or batch. LLMKube's schema defaults it to normal. This operator keeps no GPU queue: the scheduler decides, with priorityClassName. normal is served as it is (no queue); another value reports Stalled=True (UnservedField).
	// +optional
	// +kubebuilder:validation:Enum=critical;high;normal;low;batch
	Priority string `json:"priority,omitempty"`

	// evictionProtection is LLMKube's protection of GPU pods from eviction. Not served: Stalled=True (UnservedField); spec.disruption keeps Karpenter from evicting them.
	// +optional
	EvictionProtection *bool `json:"evictionProtection,omitempty"`

	// priorityClassName is the PriorityClass of the runtime pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// slo is LLMKube's service level objective (Prometheus rules). Not served: Stalled=True (UnservedField).
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	SLO *apiextensionsv1.JSON `json:"slo,omitempty"`

	// maxPodLifetimeSeconds is LLMKube's recycling of pods after an age. Not served: Stalled=True (UnservedField).
	// +optional
	MaxPodLifetimeSeconds *int64 `json:"maxPodLifetimeSeconds,omitempty"`

	// maxPodLifetimeIdleTimeoutSeconds is LLMKube's wait for idle pods before recycling them. Not served: Stalled=True (UnservedField).
	// +optional
	MaxPodLifetimeIdleTimeoutSeconds *int64 `json:"maxPodLifetimeIdleTimeoutSeconds,omitempty"`
}

// RopeScalingSpec is llama.cpp's RoPE scaling.
type RopeScalingSpec struct {
	// type is --rope-scaling: linear, yarn or longrope.
	// +required
	// +kubebuilder:validation:Enum=linear;yarn;longrope
	Type string `json:"type"`

	// factor is --rope-scale, as a decimal string such as "4.0".
	// +optional
	Factor string `json:"factor,omitempty"`

	// originalContext is --yarn-orig-ctx.
	// +optional
	OriginalContext *int32 `json:"originalContext,omitempty"`
}

// ProbeOverrides replace the runtime container's probes.
type ProbeOverrides struct {
	// startup replaces the startup probe.
	// +optional
	Startup *corev1.Probe `json:"startup,omitempty"`
	// liveness replaces the liveness probe.
	// +optional
	Liveness *corev1.Probe `json:"liveness,omitempty"`
	// readiness replaces the readiness probe.
	// +optional
	Readiness *corev1.Probe `json:"readiness,omitempty"`
}

// VLLMConfig are vLLM's settings.
type VLLMConfig struct {
	// tensorParallelSize is --tensor-parallel-size. When unset, the pod's GPU count above one.
	// +optional
	TensorParallelSize *int32 `json:"tensorParallelSize,omitempty"`
	// maxModelLen is --max-model-len.
	// +optional
	MaxModelLen *int32 `json:"maxModelLen,omitempty"`
	// quantization is --quantization.
	// +optional
	// +kubebuilder:validation:Enum=awq;gptq;squeezellm;fp8;nvfp4;mxfp4;compressed-tensors
	Quantization string `json:"quantization,omitempty"`
	// dtype is --dtype.
	// +optional
	// +kubebuilder:validation:Enum=auto;float16;bfloat16
	Dtype string `json:"dtype,omitempty"`
	// kvCacheDtype is --kv-cache-dtype; auto sets no flag.
	// +optional
	// +kubebuilder:validation:Enum=auto;fp8_e5m2;fp8_e4m3
	KVCacheDtype *string `json:"kvCacheDtype,omitempty"`
	// kvCacheCustomDtype is a --kv-cache-dtype outside kvCacheDtype's list; it replaces kvCacheDtype.
	// +optional
	KVCacheCustomDtype string `json:"kvCacheCustomDtype,omitempty"`
	// enablePrefixCaching is --enable-prefix-caching.
	// +optional
	EnablePrefixCaching *bool `json:"enablePrefixCaching,omitempty"`
	// enableChunkedPrefill is --enable-chunked-prefill.
	// +optional
	EnableChunkedPrefill *bool `json:"enableChunkedPrefill,omitempty"`
	// maxNumBatchedTokens is --max-num-batched-tokens.
	// +optional
	MaxNumBatchedTokens *int32 `json:"maxNumBatchedTokens,omitempty"`
	// attentionBackend is --attention-backend.
	// +optional
	// +kubebuilder:validation:Enum=FLASH_ATTN;FLASHINFER;XFORMERS;flashinfer;flash_attn;xformers;torch_sdpa
	AttentionBackend string `json:"attentionBackend,omitempty"`
	// speculative is speculative decoding with a draft model: --speculative-model and --num-speculative-tokens while enabled.
	// +optional
	Speculative *VLLMSpeculative `json:"speculative,omitempty"`
	// enableExpertParallel is --enable-expert-parallel.
	// +optional
	EnableExpertParallel *bool `json:"enableExpertParallel,omitempty"`
	// hfTokenSecretRef is the Secret key given to the container as HF_TOKEN, when the Model names no sourceSecretRef.
	// +optional
	HFTokenSecretRef *corev1.SecretKeySelector `json:"hfTokenSecretRef,omitempty"`
	// cpuOffloadGB is --cpu-offload-gb, on a pod with GPUs.
	// +optional
	CPUOffloadGB *int32 `json:"cpuOffloadGB,omitempty"`
	// gpuMemoryUtilization is --gpu-memory-utilization, on a pod with GPUs.
	// +optional
	GPUMemoryUtilization *float64 `json:"gpuMemoryUtilization,omitempty"`
}

// VLLMSpeculative is vLLM's speculative decoding.
type VLLMSpeculative struct {
	// enabled turns it on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// model is the draft model, --speculative-model.
	// +optional
	Model string `json:"model,omitempty"`
	// numSpeculativeTokens is --num-speculative-tokens.
	// +optional
	NumSpeculativeTokens *int32 `json:"numSpeculativeTokens,omitempty"`
}

// TGIConfig are TGI's settings.
type TGIConfig struct {
	// quantize is --quantize.
	// +optional
	// +kubebuilder:validation:Enum=bitsandbytes;gptq;awq;eetq
	Quantize string `json:"quantize,omitempty"`
	// maxInputLength is --max-input-length.
	// +optional
	MaxInputLength *int32 `json:"maxInputLength,omitempty"`
	// maxTotalTokens is --max-total-tokens.
	// +optional
	MaxTotalTokens *int32 `json:"maxTotalTokens,omitempty"`
	// dtype is --dtype.
	// +optional
	// +kubebuilder:validation:Enum=float16;bfloat16
	Dtype string `json:"dtype,omitempty"`
	// hfTokenSecretRef is the Secret key given to the container as HF_TOKEN, when the Model names no sourceSecretRef.
	// +optional
	HFTokenSecretRef *corev1.SecretKeySelector `json:"hfTokenSecretRef,omitempty"`
}

// LLMKubeResourceFields are LLMKube's fields of an InferenceService's spec.resources.
type LLMKubeResourceFields struct {
	// gpuMemory is the GPU memory one pod needs. Informational, as in LLMKube's operator: it sets no request and moves no pod; pick GPU nodes with spec.nodeSelector or the Model's hardware.gpu.
	// +optional
	GPUMemory string `json:"gpuMemory,omitempty"`

	// hostMemory is the host memory for weights and KV cache offloaded from the GPUs (such as 64Gi). It is the container's memory request, in place of memory (as in LLMKube's operator); the memory limit is the larger of the two.
	// +optional
	HostMemory string `json:"hostMemory,omitempty"`

	// ephemeralStorage is the pod's local-disk budget (such as 40Gi): the container's ephemeral-storage request and limit, so that the scheduler places the pod on a node with room and an overrun evicts this pod rather than its neighbours; an Ephemeral model cache's emptyDir is sized to it when spec.modelCache.size is unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`
	EphemeralStorage string `json:"ephemeralStorage,omitempty"`

	// gpuSharing is LLMKube's GPU sharing (time-slicing, MPS, MIG profiles). Not served: Stalled=True (UnservedField); request a shared or MIG resource with the Model's hardware.gpu.resourceName.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	GPUSharing *apiextensionsv1.JSON `json:"gpuSharing,omitempty"`
}

// LLMKubeModelFields are LLMKube's fields of a Model's spec.
type LLMKubeModelFields struct {
	// sha256 is the expected hash of the model file, which LLMKube's download checks. Not served (the runtime downloads the model itself): Stalled=True (UnservedField) on the InferenceServices that use the Model.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-fA-F0-9]{64}$`
	SHA256 string `json:"sha256,omitempty"`

	// refreshPolicy is when LLMKube downloads again: IfNotPresent (the default, served: the runtime finds the weights in the cache) or OnChange. OnChange is not served: Stalled=True (UnservedField).
	// +optional
	// +kubebuilder:validation:Enum=IfNotPresent;OnChange
	RefreshPolicy string `json:"refreshPolicy,omitempty"`

	// prefetch is LLMKube's download of the weights before any InferenceService uses the Model. Not served: Stalled=True (UnservedField) on the InferenceServices that use it; the runtime downloads on its first start.
	// +optional
	Prefetch bool `json:"prefetch,omitempty"`

	// mmproj is a multimodal projector file of the repository, given to llama.cpp as --mmproj-url. Not served yet: Stalled=True (UnservedField).
	// +optional
	Mmproj string `json:"mmproj,omitempty"`
}

// LLMKubeHardwareFields are LLMKube's fields of a Model's spec.hardware.
type LLMKubeHardwareFields struct {
	// memoryBudget is the memory limit of LLMKube's macOS agent process. Not served on a Kubernetes node: Stalled=True (UnservedField); set resources.memory.
	// +optional
	MemoryBudget string `json:"memoryBudget,omitempty"`

	// memoryFraction is the share of host memory of LLMKube's macOS agent. Not served on a Kubernetes node: Stalled=True (UnservedField).
	// +optional
	MemoryFraction *float64 `json:"memoryFraction,omitempty"`
}

// LLMKubeGPUFields are LLMKube's fields of a Model's spec.hardware.gpu.
type LLMKubeGPUFields struct {
	// memory is the GPU memory the model needs, which LLMKube's GPU scheduler reads. Informational here: the scheduler places pods by GPU count.
	// +optional
	Memory string `json:"memory,omitempty"`

	// tolerationKey is the taint key of the GPU nodes the pods tolerate; defaults to the GPU resource name (nvidia.com/gpu), the taint GPU node pools carry.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9.\-]+/[a-z0-9._\-]+$`
	TolerationKey string `json:"tolerationKey,omitempty"`

	// runtime is the llama.cpp build for AMD and Intel GPUs: vulkan or rocm, which choose LLMKube's own images. Not served (those images are LLMKube's): Stalled=True (UnservedField); set the InferenceService's spec.image.
	// +optional
	// +kubebuilder:validation:Enum=vulkan;rocm
	Runtime string `json:"runtime,omitempty"`

	// layers is how many layers llama.cpp offloads to the GPUs (--n-gpu-layers); -1 or unset offloads all of them (99).
	// +optional
	Layers int32 `json:"layers,omitempty"`

	// sharding is how llama.cpp splits the model across several GPUs.
	// +optional
	Sharding *GPUSharding `json:"sharding,omitempty"`

	// resourceClaims are Dynamic Resource Allocation claims for the GPUs, instead of an extended resource. Not served: Stalled=True (UnservedField).
	// +optional
	// +listType=atomic
	ResourceClaims []corev1.PodResourceClaim `json:"resourceClaims,omitempty"`
}

// GPUSharding is how llama.cpp splits a model across GPUs.
type GPUSharding struct {
	// strategy is --split-mode: layer (the default), row or none; tensor and pipeline are read as row and layer, as LLMKube does.
	// +optional
	// +kubebuilder:validation:Enum=layer;tensor;row;pipeline;none
	Strategy string `json:"strategy,omitempty"`

	// layerSplit are the shares of each GPU, --tensor-split; when unset, even shares.
	// +optional
	// +listType=atomic
	LayerSplit []string `json:"layerSplit,omitempty"`
}
