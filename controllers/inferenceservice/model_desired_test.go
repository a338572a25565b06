/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

func refSpec(runtime inferencev1alpha1.Runtime, mutate func(*inferencev1alpha1.InferenceServiceSpec)) *inferencev1alpha1.InferenceService {
	return spec(func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.Runtime = runtime
		s.Model = inferencev1alpha1.ModelSpec{}
		s.ModelRef = "llama"
		if mutate != nil {
			mutate(s)
		}
	})
}

func testModel(mutate func(*inferencev1alpha1.ModelKindSpec)) *inferencev1alpha1.Model {
	m := &inferencev1alpha1.Model{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "llama", UID: "model-uid"},
		Spec:       inferencev1alpha1.ModelKindSpec{Source: "org/repo"},
	}
	if mutate != nil {
		mutate(&m.Spec)
	}
	return m
}

func container(t *testing.T, d *appsv1ac.DeploymentApplyConfiguration) map[string]string {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[*e.Name] = "secret:" + *e.ValueFrom.SecretKeyRef.Name + "/" + *e.ValueFrom.SecretKeyRef.Key
		default:
			env[*e.Name] = ptr.Deref(e.Value, "")
		}
	}
	return env
}

func TestModelCacheEnvPerRuntime(t *testing.T) {
	for rt, want := range map[inferencev1alpha1.Runtime]string{
		inferencev1alpha1.RuntimeLlamaCPP: "LLAMA_CACHE",
		inferencev1alpha1.RuntimeVLLM:     "HF_HOME",
		inferencev1alpha1.RuntimeTGI:      "HF_HOME",
		inferencev1alpha1.RuntimeSGLang:   "HF_HOME",
	} {
		d, err := Deployment(refSpec(rt, nil), Inputs{Model: testModel(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(map[string]string{want: CacheMountPath}, container(t, d)); d != "" {
			t.Errorf("%s env (-want +got):\n%s", rt, d)
		}
		pod := d.Spec.Template.Spec
		if len(pod.Volumes) != 1 || *pod.Volumes[0].PersistentVolumeClaim.ClaimName != "llama-model-cache" {
			t.Errorf("%s: volumes %+v, want the Model's claim llama-model-cache", rt, pod.Volumes)
		}
		if m := pod.Containers[0].VolumeMounts; len(m) != 1 || *m[0].MountPath != CacheMountPath || *m[0].Name != CacheVolumeName {
			t.Errorf("%s: mounts %+v", rt, m)
		}
	}
}

func TestModelSourceSecretAndGPUs(t *testing.T) {
	m := testModel(func(s *inferencev1alpha1.ModelKindSpec) {
		s.Source = "org/repo-GGUF"
		s.Format = inferencev1alpha1.ModelFormatGGUF
		s.Files = []string{"model-Q4_K_M.gguf", "other.gguf"}
		s.SourceSecretRef = &inferencev1alpha1.SecretKeyReference{Name: "hf"}
		s.Hardware = &inferencev1alpha1.ModelHardware{GPU: &inferencev1alpha1.ModelGPU{Enabled: true, Count: ptr.To[int32](2), Vendor: "amd"}}
		s.Resources = &inferencev1alpha1.ModelResources{Memory: ptr.To(resource.MustParse("8Gi"))}
	})
	d, err := Deployment(refSpec(inferencev1alpha1.RuntimeLlamaCPP, nil), Inputs{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if d := cmp.Diff([]string{"--host", "::", "--port", "8080", "--metrics", "--hf-repo", "org/repo-GGUF", "--hf-file", "model-Q4_K_M.gguf",
		"--n-gpu-layers", "99", "--split-mode", "layer", "--tensor-split", "1,1"}, c.Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	if got := container(t, d)[EnvHFToken]; got != "secret:hf/HF_TOKEN" {
		t.Errorf("HF_TOKEN = %q, want a reference to Secret hf key HF_TOKEN", got)
	}
	if got := (*c.Resources.Limits)["amd.com/gpu"]; got.Value() != 2 {
		t.Errorf("limits %v, want amd.com/gpu: 2", *c.Resources.Limits)
	}
	if got := (*c.Resources.Requests)[corev1.ResourceMemory]; got.String() != "8Gi" {
		t.Errorf("requests %v, want the Model's memory", *c.Resources.Requests)
	}

	By := "the InferenceService's own GPU count and HF_TOKEN win over the Model's"
	d, err = Deployment(refSpec(inferencev1alpha1.RuntimeLlamaCPP, func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.Resources = &inferencev1alpha1.ResourceSpec{GPU: ptr.To[int32](1)}
		s.Env = []corev1.EnvVar{{Name: EnvHFToken, Value: "mine"}}
	}), Inputs{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	c = d.Spec.Template.Spec.Containers[0]
	if got := (*c.Resources.Limits)["amd.com/gpu"]; got.Value() != 1 {
		t.Errorf("%s: limits %v", By, *c.Resources.Limits)
	}
	if got := container(t, d)[EnvHFToken]; got != "mine" {
		t.Errorf("%s: HF_TOKEN = %q", By, got)
	}
}

func TestModelCacheKinds(t *testing.T) {
	// An inline model without modelCache keeps the Deployment it had before the field existed.
	d, err := Deployment(spec(nil), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if v := d.Spec.Template.Spec.Volumes; len(v) != 0 {
		t.Errorf("inline model without modelCache: volumes %+v", v)
	}
	if CacheClaim(spec(nil), nil) != nil {
		t.Error("inline model without modelCache: a claim")
	}

	eph := refSpec(inferencev1alpha1.RuntimeVLLM, func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.ModelCache = &inferencev1alpha1.ModelCacheSpec{Persistence: ptr.To(inferencev1alpha1.ModelCacheEphemeral), Size: ptr.To(resource.MustParse("20Gi"))}
	})
	d, _ = Deployment(eph, Inputs{Model: testModel(nil)})
	if v := d.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].EmptyDir == nil || v[0].EmptyDir.SizeLimit.String() != "20Gi" {
		t.Errorf("Ephemeral: volumes %+v", v)
	}
	if CacheClaim(eph, testModel(nil)) != nil {
		t.Error("Ephemeral: a claim")
	}

	own := refSpec(inferencev1alpha1.RuntimeVLLM, func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.ModelCache = &inferencev1alpha1.ModelCacheSpec{ClaimName: ptr.To("mine")}
	})
	d, _ = Deployment(own, Inputs{Model: testModel(nil)})
	if v := d.Spec.Template.Spec.Volumes; len(v) != 1 || *v[0].PersistentVolumeClaim.ClaimName != "mine" {
		t.Errorf("claimName: volumes %+v", v)
	}
	if CacheClaim(own, testModel(nil)) != nil {
		t.Error("claimName: the operator applies a claim of its own")
	}

	claim := CacheClaim(refSpec(inferencev1alpha1.RuntimeVLLM, nil), testModel(nil))
	if claim == nil || *claim.Name != "llama-model-cache" || *claim.OwnerReferences[0].Kind != "Model" || *claim.OwnerReferences[0].UID != "model-uid" {
		t.Fatalf("Cached claim %+v, want llama-model-cache owned by the Model", claim)
	}
	if got := (*claim.Spec.Resources.Requests)[corev1.ResourceStorage]; got.Cmp(DefaultCacheSize) != 0 {
		t.Errorf("size %v, want the default %v", got, DefaultCacheSize)
	}
	inline := spec(func(s *inferencev1alpha1.InferenceServiceSpec) { s.ModelCache = &inferencev1alpha1.ModelCacheSpec{} })
	if c := CacheClaim(inline, nil); c == nil || *c.Name != "foo-cache" || *c.OwnerReferences[0].Kind != "InferenceService" {
		t.Errorf("inline model with a Cached modelCache: claim %+v, want foo-cache owned by the InferenceService", c)
	}
}
