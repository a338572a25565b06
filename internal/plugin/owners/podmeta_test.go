/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package owners

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	"k8s.io/client-go/applyconfigurations"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/llmkube/operator/controllers/ownership"
)

func toU(t *testing.T, v any) *unstructured.Unstructured {
	t.Helper()
	u, err := ownership.ToUnstructured(v)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func template(labels map[string]string) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment("d", "ns").WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels)))
}

// The operator applied app and team; helm forced team to another value; a tool's key was left
// without an owner. The API server's own field manager builds the managedFields.
func TestRowsSourcesAndFlags(t *testing.T) {
	fm := managedfieldstest.NewTestFieldManager(applyconfigurations.NewTypeConverter(clientgoscheme.Scheme), appsv1.SchemeGroupVersion.WithKind("Deployment"))
	desired := template(map[string]string{"app": "d", "team": "a"})
	if err := fm.Apply(toU(t, desired), ownership.DefaultFieldManager, true); err != nil {
		t.Fatal(err)
	}
	if err := fm.Apply(toU(t, template(map[string]string{"team": "b"})), "helm", true); err != nil {
		t.Fatal(err)
	}
	live := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fm.Live().(*unstructured.Unstructured).Object, live); err != nil {
		t.Fatal(err)
	}
	live.ManagedFields = fm.ManagedFields()
	live.Spec.Template.Labels["orphan"] = "1" // in no entry

	rows, err := PodMetadata{Live: live, Desired: desired, SpecLabels: map[string]string{"team": "a"}, FieldManager: ownership.DefaultFieldManager,
		Legacy: ownership.Legacy{FieldManagers: []string{"manager"}}}.Rows()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Row{}
	for _, r := range rows {
		got[r.Key] = r
	}
	if r := got["app"]; r.Source != SourceOperator || len(r.Flags) != 0 {
		t.Errorf("app: %+v", r)
	}
	if r := got["team"]; r.Source != SourceOther || !slices.Equal(r.Flags, []string{FlagConflict}) || r.Value != "b" || *r.Want != "a" {
		t.Errorf("team: %+v", r)
	}
	if r := got["orphan"]; r.Source != SourceUnowned || !slices.Equal(r.Flags, []string{FlagUnowned}) {
		t.Errorf("orphan: %+v", r)
	}
}
