/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"testing"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
)

// An apply configuration's map holds what the apply sends and nothing else, with whole numbers
// as int64, as an object decoded from the API server holds them.
func TestToMapHoldsOnlyWhatTheApplySends(t *testing.T) {
	m, err := ToMap(appsv1ac.Deployment("d", "ns").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(2)))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := m["spec"].(map[string]any)
	if len(spec) != 1 || spec["replicas"] != int64(2) {
		t.Fatalf("spec = %#v, want only replicas: int64(2)", spec)
	}
	if _, ok := m["status"]; ok {
		t.Fatal("a status the configuration never set is in the map")
	}
	u, err := ToUnstructured(appsv1ac.Deployment("d", "ns").WithSpec(appsv1ac.DeploymentSpec().WithPaused(false)))
	if err != nil || u.GetKind() != "Deployment" || u.GetName() != "d" {
		t.Fatalf("ToUnstructured: %v, %v", u, err)
	}
}
