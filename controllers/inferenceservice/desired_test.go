/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

func spec(mutate func(*inferencev1alpha1.InferenceServiceSpec)) *inferencev1alpha1.InferenceService {
	i := &inferencev1alpha1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "foo", UID: "uid-1"},
		Spec:       inferencev1alpha1.InferenceServiceSpec{Runtime: "vllm", Model: inferencev1alpha1.ModelSpec{Source: "org/model"}},
	}
	if mutate != nil {
		mutate(&i.Spec)
	}
	return i
}

func mustDeployment(t *testing.T, i *inferencev1alpha1.InferenceService, in Inputs) map[string]any {
	t.Helper()
	ac, err := Deployment(i, in)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ownership.ToMap(ac)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDeploymentSelectorNeverHoldsUserKeys(t *testing.T) {
	ac, err := Deployment(spec(func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", LabelRuntime: "mine"}
	}), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]string{"app": "foo", LabelService: "foo"}, ac.Spec.Selector.MatchLabels); d != "" {
		t.Fatalf("selector (-want +got):\n%s", d)
	}
	want := map[string]string{"app": "foo", LabelService: "foo", LabelRuntime: "vllm", "team": "a"}
	if d := cmp.Diff(want, ac.Spec.Template.Labels); d != "" {
		t.Fatalf("template labels (-want +got):\n%s", d)
	}
	if ref := ac.OwnerReferences[0]; !*ref.Controller || *ref.UID != "uid-1" || *ref.Kind != "InferenceService" {
		t.Fatalf("owner reference %+v", ref)
	}
}

// An apply configuration owns every field it mentions: nothing the spec leaves unset may appear.
func TestDeploymentClaimsNothingUnset(t *testing.T) {
	m := mustDeployment(t, spec(nil), Inputs{})
	specMap := m["spec"].(map[string]any)
	for _, absent := range []string{"replicas", "strategy", "revisionHistoryLimit"} {
		if _, ok := specMap[absent]; ok {
			t.Errorf("spec.%s is set without an opinion", absent)
		}
	}
	pod := specMap["template"].(map[string]any)["spec"].(map[string]any)
	for _, absent := range []string{"nodeSelector", "tolerations", "imagePullSecrets", "securityContext"} {
		if _, ok := pod[absent]; ok {
			t.Errorf("pod spec.%s is set without an opinion", absent)
		}
	}
	c := pod["containers"].([]any)[0].(map[string]any)
	for _, absent := range []string{"resources", "env", "securityContext", "command"} {
		if _, ok := c[absent]; ok {
			t.Errorf("container.%s is set without an opinion", absent)
		}
	}
}

func TestDeploymentGPUAndResources(t *testing.T) {
	ac, err := Deployment(spec(func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.Resources = &inferencev1alpha1.ResourceSpec{GPU: ptr.To[int32](2), CPU: ptr.To(resource.MustParse("4")), Memory: ptr.To(resource.MustParse("16Gi"))}
		s.Env = []corev1.EnvVar{{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "token"}}}}
	}), Inputs{Replicas: ptr.To[int32](3)})
	if err != nil {
		t.Fatal(err)
	}
	if *ac.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Fatalf("strategy %v, want Recreate with gpus", *ac.Spec.Strategy.Type)
	}
	c := ac.Spec.Template.Spec.Containers[0]
	if got := (*c.Resources.Limits)[GPUResource]; got.Value() != 2 {
		t.Fatalf("gpu limit %v", got)
	}
	if got := (*c.Resources.Requests)[corev1.ResourceCPU]; got.String() != "4" {
		t.Fatalf("cpu request %v", got)
	}
	if *c.Env[0].Name != "HF_TOKEN" || *c.Env[0].ValueFrom.SecretKeyRef.Key != "token" {
		t.Fatalf("env %+v", c.Env[0])
	}
	if *ac.Spec.Replicas != 3 {
		t.Fatalf("replicas %d", *ac.Spec.Replicas)
	}
}

func TestOperatorAnnotations(t *testing.T) {
	cases := []struct {
		name string
		d    *inferencev1alpha1.DisruptionSpec
		in   Inputs
		want map[string]string
	}{
		{"not ready: protected by default", nil, Inputs{}, map[string]string{AnnotationDoNotDisrupt: "true"}},
		{"ready: not protected", nil, Inputs{Ready: true}, nil},
		{"ready, kept to avoid a roll", nil, Inputs{Ready: true, KeepStartupProtection: true}, map[string]string{AnnotationDoNotDisrupt: "true"}},
		{"protectStartup false", &inferencev1alpha1.DisruptionSpec{ProtectStartup: ptr.To(false)}, Inputs{}, nil},
		{"protectAlways", &inferencev1alpha1.DisruptionSpec{ProtectAlways: ptr.To(true), ProtectStartup: ptr.To(false)}, Inputs{Ready: true}, map[string]string{AnnotationDoNotDisrupt: "true"}},
		{"scrape on the resolved port", &inferencev1alpha1.DisruptionSpec{ProtectStartup: ptr.To(false)}, Inputs{EmitScrapeAnnotations: true},
			map[string]string{AnnotationScrape: "true", AnnotationScrapePath: "/metrics", AnnotationScrapePort: "8000"}},
	}
	for _, c := range cases {
		ac, err := Deployment(spec(func(s *inferencev1alpha1.InferenceServiceSpec) { s.Disruption = c.d }), c.in)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, ac.Spec.Template.Annotations); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

func TestServiceAndEndpoint(t *testing.T) {
	i := spec(func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.ContainerPort = ptr.To[int32](7000)
		s.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](80), Path: ptr.To("/v1"), Type: ptr.To(inferencev1alpha1.ServiceTypeNodePort)}
	})
	svc := Service(i)
	p := svc.Spec.Ports[0]
	if *p.Port != 80 || p.TargetPort.IntValue() != 7000 || *svc.Spec.Type != corev1.ServiceTypeNodePort {
		t.Fatalf("service port %d target %v type %s", *p.Port, p.TargetPort, *svc.Spec.Type)
	}
	if got := Endpoint(i); got != "http://foo.ns.svc.cluster.local:80/v1" {
		t.Fatalf("endpoint %s", got)
	}
}

func TestHPA(t *testing.T) {
	none, err := HPA(spec(nil))
	if err != nil || none != nil {
		t.Fatalf("no autoscaling must mean no HPA: %v %v", none, err)
	}
	hpa, err := HPA(spec(func(s *inferencev1alpha1.InferenceServiceSpec) {
		s.Autoscaling = &inferencev1alpha1.AutoscalingSpec{MaxReplicas: 4}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if *hpa.Spec.MinReplicas != 1 || *hpa.Spec.MaxReplicas != 4 || *hpa.Spec.ScaleTargetRef.Name != "foo" {
		t.Fatalf("hpa %+v", hpa.Spec)
	}
	if m := hpa.Spec.Metrics[0]; *m.Resource.Name != corev1.ResourceCPU || *m.Resource.Target.AverageUtilization != 80 {
		t.Fatalf("default metric %+v", m)
	}
}

func TestStatusPhases(t *testing.T) {
	i := spec(nil)
	i.Generation = 3
	st := Status(i, nil, nil, nil, nil).Status
	if *st.Phase != inferencev1alpha1.PhaseProgressing || *st.ObservedGeneration != 3 || st.ReadyReplicas != nil {
		t.Fatalf("no Deployment: %+v", st)
	}
	ready := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}}
	if st := Status(i, ready, nil, nil, nil).Status; *st.Phase != inferencev1alpha1.PhaseReady || *st.ReadyReplicas != 1 {
		t.Fatalf("ready: %+v", st)
	}
	st = Status(i, ready, []error{errTest("denied")}, nil, nil).Status
	if *st.Phase != inferencev1alpha1.PhaseDegraded {
		t.Fatalf("degraded: %+v", st)
	}
	for _, c := range st.Conditions {
		if *c.Type == inferencev1alpha1.ConditionDegraded && !strings.Contains(*c.Message, "denied") {
			t.Fatalf("Degraded must quote the error: %s", *c.Message)
		}
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
