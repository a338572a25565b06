/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package migration

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin/cluster"
)

// noOthers is a cluster where only the Deployment exists.
type noOthers struct{}

func (noOthers) LiveOf(context.Context, runtime.ApplyConfiguration) (runtime.Object, string, error) {
	return nil, "", nil
}

// legacyDeployment is what the records-based operator leaves for isvc with podLabels team and
// tier, written by Update as "manager", plus a GitOps label written by Update as "argocd": built
// by the API server's own field manager.
func legacyDeployment(t *testing.T, isvc *inferencev1alpha1.InferenceService) *appsv1.Deployment {
	t.Helper()
	ac, err := inferenceservice.Deployment(isvc, inferenceservice.Inputs{Replicas: ptr.To[int32](1)})
	if err != nil {
		t.Fatal(err)
	}
	u, err := ownership.ToUnstructured(ac)
	if err != nil {
		t.Fatal(err)
	}
	u.SetAnnotations(map[string]string{ownership.RecordLabels: "team,tier"})
	_ = unstructured.SetNestedField(u.Object, "gold", "spec", "template", "metadata", "labels", "tier")
	fm := managedfieldstest.NewTestFieldManager(builtinTypes, appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := fm.Update(u, "manager"); err != nil {
		t.Fatal(err)
	}
	next := fm.Live().(*unstructured.Unstructured).DeepCopy()
	_ = unstructured.SetNestedField(next.Object, "yes", "spec", "template", "metadata", "labels", "gitops.example.com/tracked")
	if err := fm.Update(next, "argocd"); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fm.Live().(*unstructured.Unstructured).Object, d); err != nil {
		t.Fatal(err)
	}
	d.ManagedFields = fm.ManagedFields()
	d.ResourceVersion = "7" // the migration patch tests it
	return d
}

func TestPlanPrunesWhatTheSpecDroppedAndKeepsOtherManagersKeys(t *testing.T) {
	isvc := &inferencev1alpha1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "up"},
		Spec: inferencev1alpha1.InferenceServiceSpec{
			Model:     inferencev1alpha1.ModelSpec{Source: "hf://org/repo/model.gguf"},
			Replicas:  ptr.To[int32](1),
			PodLabels: map[string]inferencev1alpha1.LabelValue{"team": "a"}, // tier was dropped
		},
	}
	live := legacyDeployment(t, isvc)
	set, err := cluster.FromObserved(&inferenceservice.Observed{ISVC: isvc, Deployment: live}, cluster.Operator{FieldManager: ownership.DefaultFieldManager})
	if err != nil {
		t.Fatal(err)
	}
	cands, err := Candidates(context.Background(), noOthers{}, set, live)
	if err != nil || len(cands) != 1 {
		t.Fatalf("candidates: %v, %v", cands, err)
	}
	p, err := For(cands[0], Options{FieldManager: ownership.DefaultFieldManager, Legacy: ownership.Legacy{FieldManagers: []string{"manager"}}})
	if err != nil || p == nil {
		t.Fatalf("plan: %v, %v", p, err)
	}
	if !slices.Equal(p.Outcome.Pruned, []string{"label:tier"}) || !p.Outcome.Rolls {
		t.Fatalf("pruned %v (rolls %v), want [label:tier] and a roll", p.Outcome.Pruned, p.Outcome.Rolls)
	}
	if !slices.Contains(p.Outcome.TakenOver, "label:team") || !slices.Contains(p.Outcome.Kept, "label:gitops.example.com/tracked") {
		t.Fatalf("taken over %v, kept %v", p.Outcome.TakenOver, p.Outcome.Kept)
	}
	if !slices.Equal(p.LegacyManagersDropped, []string{"manager"}) || !slices.Equal(p.RecordsRemoved, []string{ownership.RecordLabels}) {
		t.Fatalf("dropped %v, removed %v", p.LegacyManagersDropped, p.RecordsRemoved)
	}

	// With no legacy field manager, only the records are migrated.
	p, err = For(cands[0], Options{FieldManager: ownership.DefaultFieldManager, Legacy: ownership.Legacy{}})
	if err != nil || p == nil {
		t.Fatalf("plan without legacy managers: %v, %v", p, err)
	}
	if len(p.LegacyManagersDropped) != 0 || len(p.Outcome.Pruned) != 0 {
		t.Fatalf("with --legacy-field-managers= the Update entry stays and nothing is pruned: dropped %v, pruned %v", p.LegacyManagersDropped, p.Outcome.Pruned)
	}
}
