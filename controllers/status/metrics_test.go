/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

// Every failure of a reconcile is counted under its owner's kind and Degraded reason, also when
// it is not new (no second Event).
func TestReportFailureCountsEveryFailure(t *testing.T) {
	key := client.ObjectKey{Namespace: "ns", Name: "llm"}
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	errs := []error{
		ownership.Fail("Deployment", key, ownership.StepApply, apierrors.NewForbidden(gr, "llm", errors.New("no"))),
		ownership.Fail("Service", key, ownership.StepMigrate, errors.New("x")),
	}
	forbidden := FailuresTotal.WithLabelValues("InferenceService", ReasonForbidden)
	migration := FailuresTotal.WithLabelValues("InferenceService", ReasonMigrationFailed)
	routerForbidden := FailuresTotal.WithLabelValues("ModelRouter", ReasonForbidden)
	f0, m0, r0 := testutil.ToFloat64(forbidden), testutil.ToFloat64(migration), testutil.ToFloat64(routerForbidden)

	isvc := &inferencev1alpha1.InferenceService{}
	isvc.Namespace, isvc.Name = key.Namespace, key.Name
	rec := events.NewFakeRecorder(10)
	ReportFailure(rec, isvc, nil, 1, errs)
	ReportFailure(rec, isvc, nil, 1, errs)

	if d := testutil.ToFloat64(forbidden) - f0; d != 2 {
		t.Errorf("Forbidden counted %v times, want 2", d)
	}
	if d := testutil.ToFloat64(migration) - m0; d != 2 {
		t.Errorf("MigrationFailed counted %v times, want 2", d)
	}
	if d := testutil.ToFloat64(routerForbidden) - r0; d != 0 {
		t.Errorf("an InferenceService's failure counted under ModelRouter")
	}
}
