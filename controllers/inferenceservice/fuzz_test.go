/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

var fuzzRuntimes = []inferencev1alpha1.Runtime{"", inferencev1alpha1.RuntimeLlamaCPP, inferencev1alpha1.RuntimeVLLM,
	inferencev1alpha1.RuntimeTGI, inferencev1alpha1.RuntimeSGLang, inferencev1alpha1.RuntimePersonaPlex, inferencev1alpha1.RuntimeGeneric}

func fuzzPairs(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// FuzzDeployment builds the desired Deployment from random specs and inputs and checks the pod
// metadata promises: the selector is exactly the two selector keys and the template carries them;
// operator labels win; user annotations win; do-not-disrupt follows the disruption settings; the
// builder is deterministic and its output serialises.
func FuzzDeployment(f *testing.F) {
	f.Add("foo", uint8(1), uint16(0), uint16(0), "team=a;inference.llmkube.dev/runtime=x", "example.com/owner=alice", uint8(0), false, false, false, false, "")
	f.Add("m", uint8(6), uint16(8080), uint16(9000), "", "karpenter.sh/do-not-disrupt=false", uint8(2), true, true, true, true, "example.com/img:1")
	f.Fuzz(func(t *testing.T, name string, rt uint8, containerPort, endpointPort uint16, podLabels, podAnnotations string,
		protectStartup uint8, protectAlways, ready, emit, nonRoot bool, image string) {
		if name == "" {
			name = "x"
		}
		isvc := &inferencev1alpha1.InferenceService{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid"},
			Spec: inferencev1alpha1.InferenceServiceSpec{
				Runtime: fuzzRuntimes[int(rt)%len(fuzzRuntimes)],
				Model:   inferencev1alpha1.ModelSpec{Source: "hf://org/repo/m.gguf"},
			},
		}
		spec := &isvc.Spec
		if containerPort > 0 {
			spec.ContainerPort = ptr.To(int32(containerPort))
		}
		if endpointPort > 0 {
			spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To(int32(endpointPort))}
		}
		if image != "" {
			spec.Image = ptr.To(image)
		}
		userLabels := fuzzPairs(podLabels)
		if len(userLabels) > 0 {
			spec.PodLabels = map[string]inferencev1alpha1.LabelValue{}
			for k, v := range userLabels {
				spec.PodLabels[k] = inferencev1alpha1.LabelValue(v)
			}
		}
		userAnn := fuzzPairs(podAnnotations)
		if len(userAnn) > 0 {
			spec.PodAnnotations = userAnn
		}
		d := &inferencev1alpha1.DisruptionSpec{ProtectAlways: ptr.To(protectAlways)}
		switch protectStartup % 3 {
		case 1:
			d.ProtectStartup = ptr.To(true)
		case 2:
			d.ProtectStartup = ptr.To(false)
		}
		spec.Disruption = d
		if nonRoot {
			spec.PodSecurityContext = nonRootPodSecurityContext()
		}
		in := Inputs{Ready: ready, EmitScrapeAnnotations: emit, Replicas: ptr.To[int32](1)}

		dep, err := Deployment(isvc, in)
		if err != nil {
			t.Fatalf("Deployment: %v", err)
		}
		again, _ := Deployment(isvc, in)
		a, err := json.Marshal(dep)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("not deterministic:\n%s\n%s", a, b)
		}

		sel := SelectorLabels(name)
		if !maps.Equal(dep.Spec.Selector.MatchLabels, sel) || len(dep.Spec.Selector.MatchExpressions) > 0 {
			t.Fatalf("selector %v, want exactly %v", dep.Spec.Selector.MatchLabels, sel)
		}
		tl := dep.Spec.Template.Labels
		want := operatorLabels(isvc)
		for k, v := range want {
			if tl[k] != v {
				t.Fatalf("template label %q = %q, the operator's %q must win", k, tl[k], v)
			}
		}
		for k, v := range userLabels {
			if _, op := want[k]; !op && tl[k] != v {
				t.Fatalf("user label %q = %q missing (got %q)", k, v, tl[k])
			}
		}
		if len(tl) != len(union(want, userLabels)) {
			t.Fatalf("template labels %v invent keys", tl)
		}
		ta := dep.Spec.Template.Annotations
		for k, v := range userAnn {
			if ta[k] != v {
				t.Fatalf("user annotation %q = %q, want %q (user wins)", k, ta[k], v)
			}
		}
		protect := protectAlways || (protectStartup%3 != 2 && !ready)
		if _, overridden := userAnn[AnnotationDoNotDisrupt]; !overridden {
			if got := ta[AnnotationDoNotDisrupt] == "true"; got != protect {
				t.Fatalf("do-not-disrupt=%v, want %v (always=%v startup=%d ready=%v)", got, protect, protectAlways, protectStartup%3, ready)
			}
		}
		if nonRoot {
			if msg := restrictedViolation(dep.Spec.Template.Spec); msg != "" {
				t.Fatalf("a non-root InferenceService must satisfy restricted: %s", msg)
			}
		}
	})
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func nonRootPodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)}
}

// restrictedViolation checks the restricted Pod Security Standard's container rules the
// operator can break (the envtest suite checks the same against the API server's admission).
func restrictedViolation(pod *corev1ac.PodSpecApplyConfiguration) string {
	podNonRoot := pod.SecurityContext != nil && ptr.Deref(pod.SecurityContext.RunAsNonRoot, false)
	podSeccomp := pod.SecurityContext != nil && pod.SecurityContext.SeccompProfile != nil
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc == nil {
			return "container " + ptr.Deref(c.Name, "") + " has no securityContext"
		}
		if !podNonRoot && !ptr.Deref(sc.RunAsNonRoot, false) {
			return "runAsNonRoot is not true"
		}
		if ptr.Deref(sc.AllowPrivilegeEscalation, true) {
			return "allowPrivilegeEscalation is not false"
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, corev1.Capability("ALL")) {
			return "capabilities do not drop ALL"
		}
		if !podSeccomp && sc.SeccompProfile == nil {
			return "no seccompProfile"
		}
	}
	return ""
}
