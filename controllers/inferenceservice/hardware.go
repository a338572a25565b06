/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/runtimes"
)

// This file is what a pod's GPUs decide beyond their count: the runtime's GPU flags, the image
// of a GPU llama.cpp, the extended resource and the taint GPU nodes carry.

// DRIRenderResource is the resource AMD GPUs are requested as for llama.cpp's Vulkan and ROCm
// builds (the generic DRI render device plugin), as LLMKube's operator requests them.
const DRIRenderResource corev1.ResourceName = "devic.es/dri-render"

// LlamaCPPCUDAImage is llama.cpp's CUDA server, the image a llama.cpp pod with NVIDIA GPUs runs
// when spec.image is unset: the default image is a CPU build, on which --n-gpu-layers does nothing.
const LlamaCPPCUDAImage = "ghcr.io/ggml-org/llama.cpp:server-cuda"

// hardware is what the runtime's flags read of the pod's GPUs: spec.resources.gpu (after withModel,
// the Model's count where the InferenceService sets none) and the Model's layers and sharding.
func hardware(spec *inferencev1alpha1.InferenceServiceSpec, m *inferencev1alpha1.Model) runtimes.Hardware {
	hw := runtimes.Hardware{GPUs: gpus(spec)}
	if g := modelGPU(m); g != nil {
		hw.Layers, hw.Sharding = g.Layers, g.Sharding
	}
	return hw
}

func modelGPU(m *inferencev1alpha1.Model) *inferencev1alpha1.ModelGPU {
	if m == nil || m.Spec.Hardware == nil {
		return nil
	}
	return m.Spec.Hardware.GPU
}

// The llama.cpp server builds a llama.cpp pod with AMD GPUs runs when spec.image is unset, by the
// Model's spec.hardware.gpu.runtime: llama.cpp's own Vulkan and ROCm (HIP) images, the upstream
// counterparts of the builds LLMKube's operator runs for those runtimes.
const (
	LlamaCPPVulkanImage = "ghcr.io/ggml-org/llama.cpp:server-vulkan"
	LlamaCPPROCmImage   = "ghcr.io/ggml-org/llama.cpp:server-rocm"
)

// image is spec.image, else the runtime's default; a llama.cpp pod with GPUs gets the build of
// its GPUs: CUDA for NVIDIA, Vulkan or ROCm for the Model's gpu.runtime.
func image(spec *inferencev1alpha1.InferenceServiceSpec, rt runtimes.Runtime, gpu corev1.ResourceName, m *inferencev1alpha1.Model) string {
	if spec.Image != nil {
		return *spec.Image
	}
	if gpus(spec) == 0 || !isLlamaCPP(spec) {
		return rt.Image
	}
	if g := modelGPU(m); g != nil {
		if img, ok := llamaCPPGPUImage(g.Runtime); ok {
			return img
		}
	}
	if gpu == GPUResource {
		return LlamaCPPCUDAImage
	}
	return rt.Image
}

// isLlamaCPP says whether spec runs llama.cpp, the default runtime.
func isLlamaCPP(spec *inferencev1alpha1.InferenceServiceSpec) bool {
	return spec.Runtime == "" || spec.Runtime == inferencev1alpha1.RuntimeLlamaCPP
}

// llamaCPPGPUImage is the llama.cpp build of a Model's spec.hardware.gpu.runtime; false when it
// names none this operator knows (unservedOfModel then reports the field).
func llamaCPPGPUImage(runtime string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(runtime)) {
	case "vulkan":
		return LlamaCPPVulkanImage, true
	case "rocm":
		return LlamaCPPROCmImage, true
	}
	return "", false
}

// gpuToleration is the toleration of the taint GPU node pools carry (key: the Model's
// tolerationKey, else the GPU resource name; value present; NoSchedule), for a pod with GPUs; nil
// without GPUs, or when spec.tolerations already tolerates that key.
func gpuToleration(spec *inferencev1alpha1.InferenceServiceSpec, m *inferencev1alpha1.Model) *corev1ac.TolerationApplyConfiguration {
	if gpus(spec) == 0 {
		return nil
	}
	key := string(gpuResourceName(m))
	if g := modelGPU(m); g != nil && strings.TrimSpace(g.TolerationKey) != "" {
		key = strings.TrimSpace(g.TolerationKey)
	}
	for _, t := range spec.Tolerations {
		if t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists) {
			return nil
		}
	}
	return corev1ac.Toleration().WithKey(key).WithOperator(corev1.TolerationOpEqual).WithValue("present").WithEffect(corev1.TaintEffectNoSchedule)
}

// memory is the container's memory request and limit: hostMemory (host RAM for offloaded
// weights) is the request in place of memory, and the limit is the larger of the two, so that the
// request never exceeds the limit.
func memory(r *inferencev1alpha1.ResourceSpec) (request, limit *resource.Quantity, err error) {
	if r.HostMemory == "" {
		return r.Memory, r.Memory, nil
	}
	host, err := resource.ParseQuantity(r.HostMemory)
	if err != nil {
		return nil, nil, err
	}
	if r.Memory != nil && r.Memory.Cmp(host) > 0 {
		return &host, r.Memory, nil
	}
	return &host, ptr.To(host.DeepCopy()), nil
}

// argOverrides are the fields of isvc whose runtime flag spec.extraArgs sets itself.
func argOverrides(isvc *inferencev1alpha1.InferenceService, m *inferencev1alpha1.Model) []runtimes.Override {
	if m != nil {
		isvc = withModel(isvc, m)
	}
	spec := &isvc.Spec
	_, o := runtimes.For(runtimeOf(isvc)).Args(spec, runtimes.ResolvedPort(spec), hardware(spec, m))
	return o
}

// EventFieldOverridden is the Warning Event of a field whose flag spec.extraArgs sets itself.
const EventFieldOverridden = "FieldOverridden"

// reportedOverrides remembers, by InferenceService UID and generation, the overrides already
// reported, so each generation's are reported once per process.
var reportedOverrides sync.Map

// reportOverridden records a Warning Event naming each field spec.extraArgs overrides: the runtime
// reads the extraArgs value, as it does under LLMKube's operator, and the field's own is not
// passed.
func (r *Reconciler) reportOverridden(isvc *inferencev1alpha1.InferenceService, o []runtimes.Override) {
	if len(o) == 0 || r.Recorder == nil {
		return
	}
	if _, seen := reportedOverrides.LoadOrStore(fmt.Sprintf("%s/%d", isvc.UID, isvc.Generation), true); seen {
		return
	}
	parts := make([]string, len(o))
	for i, v := range o {
		parts[i] = v.Field + " by " + v.Flag
	}
	r.Recorder.Eventf(isvc, nil, corev1.EventTypeWarning, EventFieldOverridden, "BuildArgs",
		"spec.extraArgs sets the flag of %s: the runtime gets the extraArgs value only; remove one of the two to silence this", strings.Join(parts, ", "))
}
