/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// ReasonUnservedField blocks the plan of an InferenceService that sets a field of LLMKube's API
// this operator accepts and does not serve: LLMKube's macOS agent (Metal, MLX), a feature this
// operator has no equivalent of yet, or a model source it cannot load. Serving the rest of the
// spec without it would serve something else than what the manifest says, in silence; so no
// Deployment is created, an existing one (LLMKube's, after an upgrade) is left serving as it is,
// and the object reports Stalled=True naming each field and what would serve it.
const ReasonUnservedField = "UnservedField"

// Unserved is one field the operator accepts and does not serve, with what would serve it.
type Unserved struct {
	Field, Instead string
}

func (u Unserved) String() string { return u.Field + " (" + u.Instead + ")" }

// UnservedFields are the fields of isvc, and of the Model m it names (nil for none), that the
// operator does not serve, in a stable order. Every LLMKube field of the API is either served
// by the plan or listed here when set (TestEveryLLMKubeFieldIsServedOrStalls).
func UnservedFields(isvc *inferencev1alpha1.InferenceService, m *inferencev1alpha1.Model) []Unserved {
	var out []Unserved
	add := func(field, instead string) { out = append(out, Unserved{field, instead}) }
	s := &isvc.Spec
	if s.Runtime == inferencev1alpha1.RuntimeLlamaCPPRouter {
		add("spec.runtime: llamacpp-router", "one InferenceService per model behind a ModelRouter")
	}
	if set(s.SpeculativeDecoding) {
		add("spec.speculativeDecoding", "llama.cpp's --spec-type and -md flags in spec.extraArgs")
	}
	if s.TurboQuantBits != nil {
		add("spec.turboQuantBits", "LLMKube's macOS agent; on a node, spec.cacheTypeCustomK/V with an image that has TurboQuant")
	}
	for field, v := range map[string]*string{"spec.pagedSSDCacheDir": s.PagedSSDCacheDir, "spec.hotCacheMaxSize": s.HotCacheMaxSize, "spec.pagedSSDCacheMaxSize": s.PagedSSDCacheMaxSize} {
		if v != nil {
			add(field, "LLMKube's macOS agent")
		}
	}
	if set(s.PersonaPlexConfig) {
		add("spec.personaPlexConfig", "PersonaPlex's flags in spec.extraArgs")
	}
	if set(s.SGLangConfig) {
		add("spec.sglangConfig", "SGLang's flags in spec.extraArgs")
	}
	if s.Priority != "" && s.Priority != "normal" && s.PriorityClassName == "" {
		add("spec.priority: "+s.Priority, "spec.priorityClassName naming a PriorityClass of the cluster")
	}
	if s.EvictionProtection != nil && *s.EvictionProtection {
		add("spec.evictionProtection", "spec.disruption.protectAlways")
	}
	if set(s.SLO) {
		add("spec.slo", "alerting rules of your own on the runtime's metrics")
	}
	if s.MaxPodLifetimeSeconds != nil {
		add("spec.maxPodLifetimeSeconds", "no equivalent yet")
	}
	if s.MaxPodLifetimeIdleTimeoutSeconds != nil {
		add("spec.maxPodLifetimeIdleTimeoutSeconds", "no equivalent yet")
	}
	if r := s.Resources; r != nil && set(r.GPUSharing) {
		add("spec.resources.gpuSharing", "a shared or MIG resource named by the Model's hardware.gpu.resourceName")
	}
	if e := s.Endpoint; e != nil && enabled(e.Gateway) {
		add("spec.endpoint.gateway", "spec.gateway")
	}
	if m != nil {
		out = append(out, unservedOfModel(&m.Spec, s)...)
	}
	slices.SortFunc(out, func(a, b Unserved) int { return strings.Compare(a.Field, b.Field) })
	return out
}

// unservedOfModel are the Model's fields the operator does not serve, named as the Model's.
func unservedOfModel(ms *inferencev1alpha1.ModelKindSpec, s *inferencev1alpha1.InferenceServiceSpec) []Unserved {
	var out []Unserved
	add := func(field, instead string) { out = append(out, Unserved{"Model " + field, instead}) }
	if ms.Format == inferencev1alpha1.ModelFormatMLX {
		add("spec.format: mlx", "LLMKube's macOS agent; on a node, a gguf or safetensors build of the model")
	}
	if h := ms.Hardware; h != nil {
		if h.Accelerator == "metal" {
			add("spec.hardware.accelerator: metal", "LLMKube's macOS agent; on a node, cuda, rocm, vulkan, intel or cpu")
		}
		if h.MemoryBudget != "" {
			add("spec.hardware.memoryBudget", "LLMKube's macOS agent; on a node, the InferenceService's spec.resources.memory")
		}
		if h.MemoryFraction != nil {
			add("spec.hardware.memoryFraction", "LLMKube's macOS agent; on a node, the InferenceService's spec.resources.memory")
		}
		if g := h.GPU; g != nil {
			// llama.cpp has a build for vulkan and rocm; another runtime, or another gpu.runtime,
			// needs an image the user names.
			if _, known := llamaCPPGPUImage(g.Runtime); g.Runtime != "" && s.Image == nil &&
				(!known || !isLlamaCPP(s)) {
				add("spec.hardware.gpu.runtime: "+g.Runtime, "the InferenceService's spec.image naming a llama.cpp "+g.Runtime+" build")
			}
			if len(g.ResourceClaims) > 0 {
				add("spec.hardware.gpu.resourceClaims", "spec.hardware.gpu.resourceName of a device plugin")
			}
		}
	}
	if scheme, _, ok := strings.Cut(ms.Source, "://"); ok && scheme != "hf" && scheme != "https" {
		add("spec.source: "+scheme+"://", "an hf://, https:// or absolute-path source (a path on a volume of spec.extraVolumes)")
	}
	if ms.SHA256 != "" {
		add("spec.sha256", "a pinned revision of the repository")
	}
	if ms.RefreshPolicy == "OnChange" {
		add("spec.refreshPolicy: OnChange", "IfNotPresent; the runtime finds the weights in the cache")
	}
	if ms.Prefetch {
		add("spec.prefetch", "the runtime's download on its first start")
	}
	if ms.Mmproj != "" {
		add("spec.mmproj", "llama.cpp's --mmproj-url in the InferenceService's spec.extraArgs")
	}
	return out
}

// UnservedMessage is the Stalled message of fields.
func UnservedMessage(fields []Unserved) string {
	return fmt.Sprintf("this operator accepts and does not serve %s: remove the field or use what is named instead; until then no Deployment is created, an existing one is left serving as it is, and no Service or gateway route is published",
		JoinUnserved(fields))
}

// JoinUnserved is fields as one phrase of a Stalled message, each with what would serve it.
func JoinUnserved(fields []Unserved) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// set says whether a JSON group is present, even empty ({}), as the user wrote it.
func set(j *apiextensionsv1.JSON) bool { return j != nil && len(j.Raw) > 0 && string(j.Raw) != "null" }

// enabled says whether a JSON group has enabled: true (LLMKube's gateway switch).
func enabled(j *apiextensionsv1.JSON) bool {
	if !set(j) {
		return false
	}
	var v struct {
		Enabled bool `json:"enabled"`
	}
	return json.Unmarshal(j.Raw, &v) == nil && v.Enabled
}
