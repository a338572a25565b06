/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/plan"
)

// fieldEffect is what setting one LLMKube field does to the plan.
type fieldEffect int

const (
	// served: the objects the plan applies change.
	served fieldEffect = iota
	// stalls: the plan is blocked with ReasonUnservedField, naming the field.
	stalls
	// informational: nothing changes, as under LLMKube's operator (the field is a record).
	informational
)

type isvcT = inferencev1alpha1.InferenceService
type modelT = inferencev1alpha1.Model

// llmkubeFields is every field of the LLMKube structs of the API (see TestEveryLLMKubeFieldIsCovered),
// with a value to set and what it must do. Paths are JSON paths; model. prefixes a Model's.
var llmkubeFields = map[string]struct {
	set    func(*isvcT, *modelT)
	effect fieldEffect
}{
	"spec.mode":    {func(i *isvcT, _ *modelT) { i.Spec.Mode = "embedding" }, served},
	"spec.suspend": {func(i *isvcT, _ *modelT) { i.Spec.Suspend = true }, served},
	"spec.topologySpreadConstraints": {func(i *isvcT, _ *modelT) {
		i.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone"}}
	}, served},
	"spec.affinity": {func(i *isvcT, _ *modelT) {
		i.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
	}, served},
	"spec.runtimeClassName": {func(i *isvcT, _ *modelT) { i.Spec.RuntimeClassName = ptr.To("nvidia") }, served},
	"spec.contextSize":      {func(i *isvcT, _ *modelT) { i.Spec.ContextSize = ptr.To[int32](8192) }, served},
	"spec.ropeScaling.type": {func(i *isvcT, _ *modelT) { i.Spec.RopeScaling = &inferencev1alpha1.RopeScalingSpec{Type: "yarn"} }, served},
	"spec.ropeScaling.factor": {func(i *isvcT, _ *modelT) {
		i.Spec.RopeScaling = &inferencev1alpha1.RopeScalingSpec{Type: "yarn", Factor: "4"}
	}, served},
	"spec.ropeScaling.originalContext": {func(i *isvcT, _ *modelT) {
		i.Spec.RopeScaling = &inferencev1alpha1.RopeScalingSpec{Type: "yarn", OriginalContext: ptr.To[int32](4096)}
	}, served},
	"spec.parallelSlots":       {func(i *isvcT, _ *modelT) { i.Spec.ParallelSlots = ptr.To[int32](4) }, served},
	"spec.flashAttention":      {func(i *isvcT, _ *modelT) { i.Spec.FlashAttention = ptr.To(true) }, served},
	"spec.jinja":               {func(i *isvcT, _ *modelT) { i.Spec.Jinja = ptr.To(true) }, served},
	"spec.cacheTypeK":          {func(i *isvcT, _ *modelT) { i.Spec.CacheTypeK = "q8_0" }, served},
	"spec.cacheTypeV":          {func(i *isvcT, _ *modelT) { i.Spec.CacheTypeV = "q8_0" }, served},
	"spec.cacheTypeCustomK":    {func(i *isvcT, _ *modelT) { i.Spec.CacheTypeCustomK = "turbo3" }, served},
	"spec.cacheTypeCustomV":    {func(i *isvcT, _ *modelT) { i.Spec.CacheTypeCustomV = "turbo3" }, served},
	"spec.moeCPUOffload":       {func(i *isvcT, _ *modelT) { i.Spec.MoeCPUOffload = ptr.To(true) }, served},
	"spec.moeCPULayers":        {func(i *isvcT, _ *modelT) { i.Spec.MoeCPULayers = ptr.To[int32](8) }, served},
	"spec.noKvOffload":         {func(i *isvcT, _ *modelT) { i.Spec.NoKvOffload = ptr.To(true) }, served},
	"spec.noWarmup":            {func(i *isvcT, _ *modelT) { i.Spec.NoWarmup = ptr.To(true) }, served},
	"spec.speculativeDecoding": {func(i *isvcT, _ *modelT) { i.Spec.SpeculativeDecoding = rawJSON(`{"type":"mtp"}`) }, stalls},
	"spec.reasoningBudget":     {func(i *isvcT, _ *modelT) { i.Spec.ReasoningBudget = ptr.To[int32](0) }, served},
	"spec.reasoningBudgetMessage": {func(i *isvcT, _ *modelT) {
		i.Spec.ReasoningBudget, i.Spec.ReasoningBudgetMessage = ptr.To[int32](0), "done"
	}, served},
	"spec.metadataOverrides":    {func(i *isvcT, _ *modelT) { i.Spec.MetadataOverrides = []string{"a=int:1"} }, served},
	"spec.tensorOverrides":      {func(i *isvcT, _ *modelT) { i.Spec.TensorOverrides = []string{"exps=CPU"} }, served},
	"spec.batchSize":            {func(i *isvcT, _ *modelT) { i.Spec.BatchSize = ptr.To[int32](1024) }, served},
	"spec.uBatchSize":           {func(i *isvcT, _ *modelT) { i.Spec.UBatchSize = ptr.To[int32](256) }, served},
	"spec.turboQuantBits":       {func(i *isvcT, _ *modelT) { i.Spec.TurboQuantBits = ptr.To[int32](3) }, stalls},
	"spec.pagedSSDCacheDir":     {func(i *isvcT, _ *modelT) { i.Spec.PagedSSDCacheDir = ptr.To("/ssd") }, stalls},
	"spec.hotCacheMaxSize":      {func(i *isvcT, _ *modelT) { i.Spec.HotCacheMaxSize = ptr.To("1Gi") }, stalls},
	"spec.pagedSSDCacheMaxSize": {func(i *isvcT, _ *modelT) { i.Spec.PagedSSDCacheMaxSize = ptr.To("10Gi") }, stalls},
	"spec.command":              {func(i *isvcT, _ *modelT) { i.Spec.Command = []string{"/server"} }, served},
	"spec.extraVolumes": {func(i *isvcT, _ *modelT) {
		i.Spec.ExtraVolumes = []corev1.Volume{{Name: "x", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}, served},
	"spec.extraVolumeMounts": {func(i *isvcT, _ *modelT) {
		i.Spec.ExtraVolumeMounts = []corev1.VolumeMount{{Name: "x", MountPath: "/x"}}
	}, served},
	"spec.bindAddress":            {func(i *isvcT, _ *modelT) { i.Spec.BindAddress = "0.0.0.0" }, served},
	"spec.probeOverrides.startup": {func(i *isvcT, _ *modelT) { i.Spec.ProbeOverrides = &inferencev1alpha1.ProbeOverrides{Startup: probe()} }, served},
	"spec.probeOverrides.liveness": {func(i *isvcT, _ *modelT) {
		i.Spec.ProbeOverrides = &inferencev1alpha1.ProbeOverrides{Liveness: probe()}
	}, served},
	"spec.probeOverrides.readiness": {func(i *isvcT, _ *modelT) {
		i.Spec.ProbeOverrides = &inferencev1alpha1.ProbeOverrides{Readiness: probe()}
	}, served},
	"spec.personaPlexConfig":                {func(i *isvcT, _ *modelT) { i.Spec.PersonaPlexConfig = rawJSON(`{}`) }, stalls},
	"spec.sglangConfig":                     {func(i *isvcT, _ *modelT) { i.Spec.SGLangConfig = rawJSON(`{"tensorParallelSize":2}`) }, stalls},
	"spec.priority":                         {func(i *isvcT, _ *modelT) { i.Spec.Priority = "high" }, stalls},
	"spec.evictionProtection":               {func(i *isvcT, _ *modelT) { i.Spec.EvictionProtection = ptr.To(true) }, stalls},
	"spec.priorityClassName":                {func(i *isvcT, _ *modelT) { i.Spec.PriorityClassName = "gpu-high" }, served},
	"spec.slo":                              {func(i *isvcT, _ *modelT) { i.Spec.SLO = rawJSON(`{"enabled":true}`) }, stalls},
	"spec.maxPodLifetimeSeconds":            {func(i *isvcT, _ *modelT) { i.Spec.MaxPodLifetimeSeconds = ptr.To[int64](3600) }, stalls},
	"spec.maxPodLifetimeIdleTimeoutSeconds": {func(i *isvcT, _ *modelT) { i.Spec.MaxPodLifetimeIdleTimeoutSeconds = ptr.To[int64](60) }, stalls},
	"spec.vllmConfig.tensorParallelSize":    {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.TensorParallelSize = ptr.To[int32](2) }), served},
	"spec.vllmConfig.maxModelLen":           {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.MaxModelLen = ptr.To[int32](4096) }), served},
	"spec.vllmConfig.quantization":          {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.Quantization = "fp8" }), served},
	"spec.vllmConfig.dtype":                 {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.Dtype = "half" }), served},
	"spec.vllmConfig.kvCacheDtype":          {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.KVCacheDtype = ptr.To("fp8") }), served},
	"spec.vllmConfig.kvCacheCustomDtype":    {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.KVCacheCustomDtype = "fp8_e4m3" }), served},
	"spec.vllmConfig.enablePrefixCaching":   {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.EnablePrefixCaching = ptr.To(true) }), served},
	"spec.vllmConfig.enableChunkedPrefill":  {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.EnableChunkedPrefill = ptr.To(true) }), served},
	"spec.vllmConfig.maxNumBatchedTokens":   {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.MaxNumBatchedTokens = ptr.To[int32](8192) }), served},
	"spec.vllmConfig.attentionBackend":      {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.AttentionBackend = "FLASHINFER" }), served},
	"spec.vllmConfig.speculative.enabled": {vllm(func(c *inferencev1alpha1.VLLMConfig) {
		c.Speculative = &inferencev1alpha1.VLLMSpeculative{Enabled: ptr.To(true), Model: "draft"}
	}), served},
	"spec.vllmConfig.speculative.model": {vllm(func(c *inferencev1alpha1.VLLMConfig) {
		c.Speculative = &inferencev1alpha1.VLLMSpeculative{Enabled: ptr.To(true), Model: "draft"}
	}), served},
	"spec.vllmConfig.speculative.numSpeculativeTokens": {vllm(func(c *inferencev1alpha1.VLLMConfig) {
		c.Speculative = &inferencev1alpha1.VLLMSpeculative{Enabled: ptr.To(true), Model: "draft", NumSpeculativeTokens: ptr.To[int32](4)}
	}), served},
	"spec.vllmConfig.enableExpertParallel": {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.EnableExpertParallel = ptr.To(true) }), served},
	"spec.vllmConfig.hfTokenSecretRef": {vllm(func(c *inferencev1alpha1.VLLMConfig) {
		c.HFTokenSecretRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "token"}
	}), served},
	"spec.vllmConfig.cpuOffloadGB":         {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.CPUOffloadGB = ptr.To[int32](8) }), served},
	"spec.vllmConfig.gpuMemoryUtilization": {vllm(func(c *inferencev1alpha1.VLLMConfig) { c.GPUMemoryUtilization = ptr.To(0.8) }), served},
	"spec.tgiConfig.quantize":              {tgi(func(c *inferencev1alpha1.TGIConfig) { c.Quantize = "awq" }), served},
	"spec.tgiConfig.maxInputLength":        {tgi(func(c *inferencev1alpha1.TGIConfig) { c.MaxInputLength = ptr.To[int32](1024) }), served},
	"spec.tgiConfig.maxTotalTokens":        {tgi(func(c *inferencev1alpha1.TGIConfig) { c.MaxTotalTokens = ptr.To[int32](2048) }), served},
	"spec.tgiConfig.dtype":                 {tgi(func(c *inferencev1alpha1.TGIConfig) { c.Dtype = "bfloat16" }), served},
	"spec.tgiConfig.hfTokenSecretRef": {tgi(func(c *inferencev1alpha1.TGIConfig) {
		c.HFTokenSecretRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "token"}
	}), served},
	"spec.resources.gpuMemory":        {func(i *isvcT, _ *modelT) { res(i).GPUMemory = "16Gi" }, informational},
	"spec.resources.hostMemory":       {func(i *isvcT, _ *modelT) { res(i).HostMemory = "64Gi" }, served},
	"spec.resources.ephemeralStorage": {func(i *isvcT, _ *modelT) { res(i).EphemeralStorage = "40Gi" }, served},
	"spec.resources.gpuSharing":       {func(i *isvcT, _ *modelT) { res(i).GPUSharing = rawJSON(`{"strategy":"time-slicing"}`) }, stalls},

	"model.spec.sha256":                     {func(_ *isvcT, m *modelT) { m.Spec.SHA256 = strings.Repeat("a", 64) }, stalls},
	"model.spec.refreshPolicy":              {func(_ *isvcT, m *modelT) { m.Spec.RefreshPolicy = "OnChange" }, stalls},
	"model.spec.prefetch":                   {func(_ *isvcT, m *modelT) { m.Spec.Prefetch = true }, stalls},
	"model.spec.mmproj":                     {func(_ *isvcT, m *modelT) { m.Spec.Mmproj = "mmproj.gguf" }, stalls},
	"model.spec.hardware.memoryBudget":      {func(_ *isvcT, m *modelT) { m.Spec.Hardware.MemoryBudget = "32Gi" }, stalls},
	"model.spec.hardware.memoryFraction":    {func(_ *isvcT, m *modelT) { m.Spec.Hardware.MemoryFraction = ptr.To(0.5) }, stalls},
	"model.spec.hardware.gpu.memory":        {func(_ *isvcT, m *modelT) { m.Spec.Hardware.GPU.Memory = "24Gi" }, informational},
	"model.spec.hardware.gpu.tolerationKey": {func(_ *isvcT, m *modelT) { m.Spec.Hardware.GPU.TolerationKey = "example.com/gpu" }, served},
	"model.spec.hardware.gpu.runtime":       {func(_ *isvcT, m *modelT) { m.Spec.Hardware.GPU.Runtime = "vulkan" }, served},
	// A gpu.runtime no llama.cpp build of this operator's is known for needs an image.
	"model.spec.hardware.gpu.runtime: cann": {func(_ *isvcT, m *modelT) { m.Spec.Hardware.GPU.Runtime = "cann" }, stalls},
	"model.spec.hardware.gpu.layers":        {func(_ *isvcT, m *modelT) { m.Spec.Hardware.GPU.Layers = 20 }, served},
	"model.spec.hardware.gpu.sharding.strategy": {func(_ *isvcT, m *modelT) {
		m.Spec.Hardware.GPU.Count = ptr.To[int32](2)
		m.Spec.Hardware.GPU.Sharding = &inferencev1alpha1.GPUSharding{Strategy: "row"}
	}, served},
	"model.spec.hardware.gpu.sharding.layerSplit": {func(_ *isvcT, m *modelT) {
		m.Spec.Hardware.GPU.Count = ptr.To[int32](2)
		m.Spec.Hardware.GPU.Sharding = &inferencev1alpha1.GPUSharding{LayerSplit: []string{"0-9", "10-29"}}
	}, served},
	"model.spec.hardware.gpu.resourceClaims": {func(_ *isvcT, m *modelT) {
		m.Spec.Hardware.GPU.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}}
	}, stalls},
}

func rawJSON(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func probe() *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9)}}, PeriodSeconds: 7}
}

func res(i *isvcT) *inferencev1alpha1.ResourceSpec {
	if i.Spec.Resources == nil {
		i.Spec.Resources = &inferencev1alpha1.ResourceSpec{}
	}
	return i.Spec.Resources
}

func vllm(f func(*inferencev1alpha1.VLLMConfig)) func(*isvcT, *modelT) {
	return func(i *isvcT, _ *modelT) {
		i.Spec.VLLMConfig = &inferencev1alpha1.VLLMConfig{}
		f(i.Spec.VLLMConfig)
	}
}

func tgi(f func(*inferencev1alpha1.TGIConfig)) func(*isvcT, *modelT) {
	return func(i *isvcT, _ *modelT) {
		i.Spec.TGIConfig = &inferencev1alpha1.TGIConfig{}
		f(i.Spec.TGIConfig)
	}
}

// baseFor is an InferenceService of a one-GPU Model, of the runtime the field belongs to, with
// none of LLMKube's fields set.
func baseFor(path string) (*isvcT, *modelT) {
	rt := inferencev1alpha1.RuntimeLlamaCPP
	switch {
	case strings.HasPrefix(path, "spec.vllmConfig."):
		rt = inferencev1alpha1.RuntimeVLLM
	case strings.HasPrefix(path, "spec.tgiConfig."):
		rt = inferencev1alpha1.RuntimeTGI
	}
	m := testModel(func(s *inferencev1alpha1.ModelKindSpec) {
		s.Format = inferencev1alpha1.ModelFormatGGUF
		s.Hardware = &inferencev1alpha1.ModelHardware{GPU: &inferencev1alpha1.ModelGPU{Enabled: true, Count: ptr.To[int32](1)}}
	})
	return refSpec(rt, nil), m
}

// planOutput is what the plan applies for isvc (Deployment, Service, HPA, claim) as JSON, or the
// unserved fields that block it.
func planOutput(t *testing.T, isvc *isvcT, m *modelT) (string, []Unserved) {
	t.Helper()
	p, err := PlanFor(&Observed{ISVC: isvc, Model: m}, Flags{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Blocked == ReasonUnservedField {
		return "", p.Unserved
	}
	if p.Blocked != "" {
		t.Fatalf("plan blocked: %s: %s", p.Blocked, p.BlockedMessage)
	}
	d, err := p.Deployment(nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	out := []any{d}
	for _, o := range append(append([]plan.Object(nil), p.Before...), p.After...) {
		out = append(out, o.Desired)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

// TestEveryLLMKubeFieldIsServedOrStalls sets each LLMKube field alone on a plain InferenceService
// and plans it: a served field changes what is applied, a field that stalls blocks the plan
// naming it, an informational one changes nothing. None is ignored in silence.
func TestEveryLLMKubeFieldIsServedOrStalls(t *testing.T) {
	for path, f := range llmkubeFields {
		isvc, m := baseFor(path)
		before, u := planOutput(t, isvc, m)
		if len(u) > 0 {
			t.Fatalf("%s: the base plan is blocked: %v", path, u)
		}
		f.set(isvc, m)
		after, u := planOutput(t, isvc, m)
		switch f.effect {
		case served:
			if len(u) > 0 {
				t.Errorf("%s: served, but the plan is blocked by %v", path, u)
			} else if after == before {
				t.Errorf("%s: served, but the plan applies the same objects with it as without it", path)
			}
		case stalls:
			name := strings.TrimPrefix(path, "model.")
			if !slices.ContainsFunc(u, func(x Unserved) bool { return strings.Contains(x.Field, name) }) {
				t.Errorf("%s: should stall naming the field; unserved: %v", path, u)
			}
		case informational:
			if len(u) > 0 || after != before {
				t.Errorf("%s: informational, but the plan changed (unserved %v)", path, u)
			}
		}
	}
}

// TestEveryLLMKubeFieldIsCovered walks the LLMKube structs of the API: a field added there without
// a row in llmkubeFields fails here, so every field is decided.
func TestEveryLLMKubeFieldIsCovered(t *testing.T) {
	var paths []string
	walk("spec", reflect.TypeFor[inferencev1alpha1.LLMKubeInferenceServiceFields](), &paths)
	walk("spec.resources", reflect.TypeFor[inferencev1alpha1.LLMKubeResourceFields](), &paths)
	walk("model.spec", reflect.TypeFor[inferencev1alpha1.LLMKubeModelFields](), &paths)
	walk("model.spec.hardware", reflect.TypeFor[inferencev1alpha1.LLMKubeHardwareFields](), &paths)
	walk("model.spec.hardware.gpu", reflect.TypeFor[inferencev1alpha1.LLMKubeGPUFields](), &paths)
	for _, p := range paths {
		if _, ok := llmkubeFields[p]; !ok {
			t.Errorf("%s: no row in llmkubeFields: decide whether it is served, stalls or is informational", p)
		}
	}
	if len(paths) < 80 {
		t.Errorf("walked only %d fields", len(paths))
	}
}

// walk appends the JSON paths of t's fields under prefix, descending into the API's own structs
// (not Kubernetes' types, which are served whole).
func walk(prefix string, t reflect.Type, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() {
			walk(prefix+"."+name, ft, out)
			continue
		}
		*out = append(*out, prefix+"."+name)
	}
}
