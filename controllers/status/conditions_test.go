/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
)

func TestReasonNamesTheFailure(t *testing.T) {
	key := client.ObjectKey{Namespace: "ns", Name: "llm"}
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{ownership.Fail("Deployment", key, ownership.StepApply, apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "llm", nil)), ReasonApplyRejected},
		{ownership.Fail("Deployment", key, ownership.StepApply, apierrors.NewForbidden(gr, "llm", errors.New("no"))), ReasonForbidden},
		{ownership.Fail("Deployment", key, ownership.StepApply, apierrors.NewConflict(gr, "llm", errors.New("stale"))), ReasonApplyFailed},
		{ownership.Fail("Deployment", key, ownership.StepGate, errors.New("endpointslices: forbidden")), ReasonRolloutGateFailed},
		{ownership.Fail("Service", key, ownership.StepMigrate, errors.New("x")), ReasonMigrationFailed},
		{ownership.Fail("Service", key, ownership.StepExtract, errors.New("x")), ReasonReconcileFailed},
		{errors.New("bare"), ReasonReconcileFailed},
	} {
		if got := Reason(c.err); got != c.want {
			t.Errorf("Reason(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	gate := ownership.Fail("Deployment", key, ownership.StepGate, errors.New("boom")).Error()
	if gate != "Deployment ns/llm: rollout gate: boom" {
		t.Errorf("a local failure names the object and the step, never the API server: %q", gate)
	}
}
