/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/runtimes"
)

// The model cache: one volume in the pod, mounted at one path, with the runtime's own cache
// variable pointing at it.
const (
	CacheVolumeName = "model-cache"
	CacheMountPath  = "/model-cache"
	// LabelModel is set on a Model's cache claim, naming the Model.
	LabelModel = "inference.llmkube.dev/model"
	// EnvHFToken is the variable the Model's token Secret becomes.
	EnvHFToken = "HF_TOKEN"
)

// DefaultCacheSize is the storage a Cached claim requests when spec.modelCache.size is unset.
var DefaultCacheSize = resource.MustParse("50Gi")

// withModel is isvc as the Deployment builder reads it when it names a Model: spec.model from the
// Model's source (and its first file for a gguf repository), and the GPU count, CPU and memory
// from the Model where the InferenceService sets none. isvc itself is not changed.
func withModel(isvc *inferencev1alpha1.InferenceService, m *inferencev1alpha1.Model) *inferencev1alpha1.InferenceService {
	out := isvc.DeepCopy()
	out.Spec.Model.Source = modelSource(&m.Spec)
	r := out.Spec.Resources
	if r == nil {
		r = &inferencev1alpha1.ResourceSpec{}
	}
	if r.GPU == nil {
		if n := modelGPUs(&m.Spec); n > 0 {
			r.GPU = ptr.To(n)
		}
	}
	if mr := m.Spec.Resources; mr != nil {
		if r.CPU == nil && mr.CPU != nil {
			r.CPU = ptr.To(mr.CPU.DeepCopy())
		}
		if r.Memory == nil && mr.Memory != nil {
			r.Memory = ptr.To(mr.Memory.DeepCopy())
		}
	}
	if r.GPU != nil || r.CPU != nil || r.Memory != nil {
		out.Spec.Resources = r
	}
	return out
}

// modelSource is the Model's source, with the first of files appended when the model is gguf and
// the source names a Hugging Face repository without a file: llama.cpp loads that one file.
func modelSource(spec *inferencev1alpha1.ModelKindSpec) string {
	s := spec.Source
	if spec.Format != inferencev1alpha1.ModelFormatGGUF || len(spec.Files) == 0 {
		return s
	}
	repo, isHF := strings.CutPrefix(s, "hf://")
	if !isHF && (strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "/")) {
		return s
	}
	if strings.Count(repo, "/") != 1 {
		return s // hf://org/repo/file already names its file
	}
	return "hf://" + repo + "/" + spec.Files[0]
}

// modelGPUs is the GPU count a Model asks for: hardware.gpu.count, else one when enabled.
func modelGPUs(spec *inferencev1alpha1.ModelKindSpec) int32 {
	if spec.Hardware == nil || spec.Hardware.GPU == nil {
		return 0
	}
	g := spec.Hardware.GPU
	if g.Count != nil {
		return *g.Count
	}
	if g.Enabled {
		return 1
	}
	return 0
}

// gpuResourceName is the extended resource GPUs are requested as: the Model's resourceName, else
// its vendor's, else nvidia.com/gpu.
func gpuResourceName(m *inferencev1alpha1.Model) corev1.ResourceName {
	if m == nil || m.Spec.Hardware == nil || m.Spec.Hardware.GPU == nil {
		return GPUResource
	}
	g := m.Spec.Hardware.GPU
	switch {
	case g.ResourceName != "":
		return corev1.ResourceName(g.ResourceName)
	case g.Vendor == "amd" && (g.Runtime == "vulkan" || g.Runtime == "rocm"):
		return DRIRenderResource
	case g.Vendor == "amd":
		return "amd.com/gpu"
	case g.Vendor == "intel":
		return "gpu.intel.com/i915"
	}
	return GPUResource
}

// cacheKind is what backs the model cache of an InferenceService.
type cacheKind int

const (
	cacheNone cacheKind = iota
	cacheUserClaim
	cacheClaim
	cacheEmptyDir
)

// cacheOf says what backs isvc's model cache. Without spec.modelCache, an InferenceService with
// modelRef gets its Model's claim and one with an inline model gets no cache, as before the field
// existed, so an upgrade rolls no pod.
func cacheOf(isvc *inferencev1alpha1.InferenceService) cacheKind {
	mc := isvc.Spec.ModelCache
	switch {
	case mc == nil && isvc.Spec.ModelRef == "":
		return cacheNone
	case mc == nil:
		return cacheClaim
	case mc.ClaimName != nil:
		return cacheUserClaim
	case ptr.Deref(mc.Persistence, inferencev1alpha1.ModelCacheCached) == inferencev1alpha1.ModelCacheEphemeral:
		return cacheEmptyDir
	}
	return cacheClaim
}

// CacheClaimName is the name of the claim the operator applies for isvc's cache: one per Model
// (shared by every InferenceService of that Model), or one per InferenceService with an inline
// model. The two suffixes differ so a Model and an InferenceService of the same name never share.
func CacheClaimName(isvc *inferencev1alpha1.InferenceService) string {
	if isvc.Spec.ModelRef != "" {
		return isvc.Spec.ModelRef + "-model-cache"
	}
	return inlineClaimName(isvc)
}

// inlineClaimName is the name of the claim of an inline model's Cached cache.
func inlineClaimName(isvc *inferencev1alpha1.InferenceService) string { return isvc.Name + "-cache" }

// CacheClaim is the PersistentVolumeClaim the operator applies for isvc's Cached model cache, owned
// by the Model m when isvc names one (so it outlives the InferenceService) and by isvc otherwise;
// nil when the cache is not an operator-applied claim.
func CacheClaim(isvc *inferencev1alpha1.InferenceService, m *inferencev1alpha1.Model) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	if cacheOf(isvc) != cacheClaim || (isvc.Spec.ModelRef != "" && m == nil) {
		return nil
	}
	size := DefaultCacheSize
	spec := corev1ac.PersistentVolumeClaimSpec().WithAccessModes(corev1.ReadWriteOnce)
	if mc := isvc.Spec.ModelCache; mc != nil {
		if mc.Size != nil {
			size = *mc.Size
		}
		if mc.StorageClassName != nil {
			spec.WithStorageClassName(*mc.StorageClassName)
		}
	}
	spec.WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: size}))
	claim := corev1ac.PersistentVolumeClaim(CacheClaimName(isvc), isvc.Namespace).WithSpec(spec)
	if m != nil {
		return claim.
			WithLabels(map[string]string{LabelModel: m.Name}).
			WithOwnerReferences(metav1ac.OwnerReference().
				WithAPIVersion(inferencev1alpha1.GroupVersion.String()).
				WithKind("Model").
				WithName(m.Name).
				WithUID(m.UID).
				WithController(true))
	}
	return claim.WithLabels(operatorLabels(isvc)).WithOwnerReferences(ownerReference(isvc))
}

// cacheVolume is the pod volume of isvc's model cache, or nil without one.
func cacheVolume(isvc *inferencev1alpha1.InferenceService) *corev1ac.VolumeApplyConfiguration {
	v := corev1ac.Volume().WithName(CacheVolumeName)
	switch cacheOf(isvc) {
	case cacheUserClaim:
		return v.WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(*isvc.Spec.ModelCache.ClaimName))
	case cacheClaim:
		return v.WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(CacheClaimName(isvc)))
	case cacheEmptyDir:
		ed := corev1ac.EmptyDirVolumeSource()
		if s := isvc.Spec.ModelCache.Size; s != nil {
			ed.WithSizeLimit(*s)
		} else if r := isvc.Spec.Resources; r != nil && r.EphemeralStorage != "" {
			// The pod's disk budget bounds the cache, as in LLMKube's operator.
			if q, err := resource.ParseQuantity(r.EphemeralStorage); err == nil {
				ed.WithSizeLimit(q)
			}
		}
		return v.WithEmptyDir(ed)
	}
	return nil
}

// addModel mounts isvc's model cache in the runtime container (and the pod), points the runtime's
// cache variable at it, and passes the Model's token Secret as HF_TOKEN by reference. A variable
// the user sets in spec.env wins: it is left out here, so the env list never names it twice.
//
// Note: it runs before the container is added to the pod spec, which copies the container.
func addModel(c *corev1ac.ContainerApplyConfiguration, isvc *inferencev1alpha1.InferenceService, m *inferencev1alpha1.Model, rt runtimes.Runtime) *corev1ac.VolumeApplyConfiguration {
	userSets := func(name string) bool {
		for _, e := range isvc.Spec.Env {
			if e.Name == name {
				return true
			}
		}
		return false
	}
	if ref := runtimeToken(&isvc.Spec); ref != nil && !userSets(EnvHFToken) {
		// The runtime's own token (vllmConfig or tgiConfig hfTokenSecretRef) is the more specific.
		c.WithEnv(corev1ac.EnvVar().WithName(EnvHFToken).WithValueFrom(corev1ac.EnvVarSource().WithSecretKeyRef(
			corev1ac.SecretKeySelector().WithName(ref.Name).WithKey(ref.Key))))
	} else if m != nil && m.Spec.SourceSecretRef != nil && !userSets(EnvHFToken) {
		ref := m.Spec.SourceSecretRef
		c.WithEnv(corev1ac.EnvVar().WithName(EnvHFToken).WithValueFrom(corev1ac.EnvVarSource().WithSecretKeyRef(
			corev1ac.SecretKeySelector().WithName(ref.Name).WithKey(ptr.Deref(ref.Key, EnvHFToken)))))
	}
	v := cacheVolume(isvc)
	if v == nil {
		return nil
	}
	if rt.CacheEnv != "" && !userSets(rt.CacheEnv) {
		c.WithEnv(corev1ac.EnvVar().WithName(rt.CacheEnv).WithValue(CacheMountPath))
	}
	c.WithVolumeMounts(corev1ac.VolumeMount().WithName(CacheVolumeName).WithMountPath(CacheMountPath))
	return v
}

// runtimeToken is the Hugging Face token Secret of the runtime's settings: vllmConfig's for vLLM,
// tgiConfig's for TGI; nil for none.
func runtimeToken(spec *inferencev1alpha1.InferenceServiceSpec) *corev1.SecretKeySelector {
	switch {
	case spec.Runtime == inferencev1alpha1.RuntimeVLLM && spec.VLLMConfig != nil:
		return spec.VLLMConfig.HFTokenSecretRef
	case spec.Runtime == inferencev1alpha1.RuntimeTGI && spec.TGIConfig != nil:
		return spec.TGIConfig.HFTokenSecretRef
	}
	return nil
}
