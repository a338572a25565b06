/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

func legacyPodDeployment(containers ...string) *appsv1ac.DeploymentApplyConfiguration {
	pod := corev1ac.PodSpec().WithVolumes(corev1ac.Volume().WithName("cache").WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	for _, c := range containers {
		pod.WithContainers(corev1ac.Container().WithName(c).WithImage(c + ":1").WithImagePullPolicy("IfNotPresent"))
	}
	return appsv1ac.Deployment("m", "ns").WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "m"})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "m"}).WithSpec(pod)))
}

// TestPlanTakesTheLegacyOperatorsOtherContainers: LLMKube's operator created its Deployment with
// a llama-server container and an init container; the plan has model-server only. The migration
// takes those items whole, so the first apply removes them, and leaves the fields the legacy entry owns
// in an item the plan has too (model-server's imagePullPolicy) released, as before.
func TestPlanTakesTheLegacyOperatorsOtherContainers(t *testing.T) {
	old := legacyPodDeployment("llama-server", "model-server")
	old.Spec.Template.Spec.WithInitContainers(corev1ac.Container().WithName("model-downloader").WithImage("curl:1"))
	fm := managedfieldstest.NewTestFieldManager(NewTypeConverter(scheme(t)), appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := fm.Update(u(t, old), "manager"); err != nil {
		t.Fatal(err)
	}
	live := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fm.Live().(*unstructured.Unstructured).Object, live); err != nil {
		t.Fatal(err)
	}
	live.ResourceVersion = "3"
	desired := appsv1ac.Deployment("m", "ns").WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("model-server").WithImage("model-server:1")))))
	plan, err := Legacy{FieldManagers: DefaultLegacyFieldManagers}.Plan(live, op, desired)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(plan.Patch)
	for _, item := range []string{`k:{\"name\":\"llama-server\"}`, `k:{\"name\":\"model-downloader\"}`, `k:{\"name\":\"cache\"}`} {
		if !strings.Contains(raw, item) {
			t.Errorf("the migration takes %s, which the plan does not have, so the first apply removes it: %s", item, raw)
		}
	}
	if strings.Count(raw, `f:imagePullPolicy`) != 1 {
		t.Errorf("llama-server's imagePullPolicy is taken with its container, model-server's stays released: %s", raw)
	}
}
