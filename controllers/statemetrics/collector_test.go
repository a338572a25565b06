/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package statemetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

func TestCollectorCountsObjectsFromTheReader(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := inferencev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cond := func(typ string, st metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-90 * time.Second))}
	}
	objs := []runtime.Object{
		&inferencev1alpha1.InferenceService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "ready"},
			Spec:       inferencev1alpha1.InferenceServiceSpec{Gateway: &inferencev1alpha1.GatewaySpec{}},
			Status: inferencev1alpha1.InferenceServiceStatus{Phase: inferencev1alpha1.PhaseReady, ReadyReplicas: 2, Ready: "2/3",
				Conditions: []metav1.Condition{cond(inferencev1alpha1.ConditionGatewayReady, metav1.ConditionFalse, "NotAllowedByListeners"),
					cond(inferencev1alpha1.ConditionRolloutDeferred, metav1.ConditionTrue, "WaitingForIdle")}},
		},
		&inferencev1alpha1.InferenceService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "new"},
		},
		// A namespace with no gateway and no waiting rollout still gets every state and reason, at 0.
		&inferencev1alpha1.InferenceService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "plain"},
			Status:     inferencev1alpha1.InferenceServiceStatus{Phase: inferencev1alpha1.PhasePending, Ready: "0/1"},
		},
		&inferencev1alpha1.ModelRouter{
			ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "r"},
			Spec:       inferencev1alpha1.ModelRouterSpec{Backends: make([]inferencev1alpha1.Backend, 3)},
			Status: inferencev1alpha1.ModelRouterStatus{
				Conditions: []metav1.Condition{cond(inferencev1alpha1.ConditionDegraded, metav1.ConditionTrue, "ApplyFailed")},
				Backends:   []inferencev1alpha1.BackendStatus{{Name: "x", Resolved: true}, {Name: "y"}},
			},
		},
	}
	c := &Collector{Reader: fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(objs...).Build(), Now: func() time.Time { return now }}

	want := `
# HELP llmkube_inferenceservice_gateways x
# TYPE llmkube_inferenceservice_gateways gauge
llmkube_inferenceservice_gateways{namespace="a",state="accepted"} 0
llmkube_inferenceservice_gateways{namespace="a",state="crd_missing"} 0
llmkube_inferenceservice_gateways{namespace="a",state="pending"} 0
llmkube_inferenceservice_gateways{namespace="a",state="refused"} 1
llmkube_inferenceservice_gateways{namespace="c",state="accepted"} 0
llmkube_inferenceservice_gateways{namespace="c",state="crd_missing"} 0
llmkube_inferenceservice_gateways{namespace="c",state="pending"} 0
llmkube_inferenceservice_gateways{namespace="c",state="refused"} 0
# HELP llmkube_inferenceservice_rollout_deferred x
# TYPE llmkube_inferenceservice_rollout_deferred gauge
llmkube_inferenceservice_rollout_deferred{namespace="a",reason="IdleDetectionUnsupported"} 0
llmkube_inferenceservice_rollout_deferred{namespace="a",reason="IdleTimeoutNotForced"} 0
llmkube_inferenceservice_rollout_deferred{namespace="a",reason="WaitingForIdle"} 1
llmkube_inferenceservice_rollout_deferred{namespace="c",reason="IdleDetectionUnsupported"} 0
llmkube_inferenceservice_rollout_deferred{namespace="c",reason="IdleTimeoutNotForced"} 0
llmkube_inferenceservice_rollout_deferred{namespace="c",reason="WaitingForIdle"} 0
# HELP llmkube_inferenceservice_phase x
# TYPE llmkube_inferenceservice_phase gauge
llmkube_inferenceservice_phase{name="new",namespace="a",phase="Unknown"} 1
llmkube_inferenceservice_phase{name="ready",namespace="a",phase="Ready"} 1
llmkube_inferenceservice_phase{name="plain",namespace="c",phase="Pending"} 1
# HELP llmkube_inferenceservice_replicas_ready x
# TYPE llmkube_inferenceservice_replicas_ready gauge
llmkube_inferenceservice_replicas_ready{name="new",namespace="a"} 0
llmkube_inferenceservice_replicas_ready{name="ready",namespace="a"} 2
llmkube_inferenceservice_replicas_ready{name="plain",namespace="c"} 0
# HELP llmkube_inferenceservice_replicas_wanted x
# TYPE llmkube_inferenceservice_replicas_wanted gauge
llmkube_inferenceservice_replicas_wanted{name="ready",namespace="a"} 3
llmkube_inferenceservice_replicas_wanted{name="plain",namespace="c"} 1
# HELP llmkube_inferenceservice_rollout_deferred_seconds x
# TYPE llmkube_inferenceservice_rollout_deferred_seconds gauge
llmkube_inferenceservice_rollout_deferred_seconds{name="ready",namespace="a"} 90
# HELP llmkube_inferenceservices x
# TYPE llmkube_inferenceservices gauge
llmkube_inferenceservices{namespace="a",phase="Degraded"} 0
llmkube_inferenceservices{namespace="a",phase="Pending"} 0
llmkube_inferenceservices{namespace="a",phase="Progressing"} 0
llmkube_inferenceservices{namespace="a",phase="Ready"} 1
llmkube_inferenceservices{namespace="a",phase="Unknown"} 1
llmkube_inferenceservices{namespace="c",phase="Degraded"} 0
llmkube_inferenceservices{namespace="c",phase="Pending"} 1
llmkube_inferenceservices{namespace="c",phase="Progressing"} 0
llmkube_inferenceservices{namespace="c",phase="Ready"} 0
# HELP llmkube_modelrouter_backends x
# TYPE llmkube_modelrouter_backends gauge
llmkube_modelrouter_backends{name="r",namespace="b"} 3
# HELP llmkube_modelrouter_backends_resolved x
# TYPE llmkube_modelrouter_backends_resolved gauge
llmkube_modelrouter_backends_resolved{name="r",namespace="b"} 1
# HELP llmkube_modelrouters x
# TYPE llmkube_modelrouters gauge
llmkube_modelrouters{namespace="b",phase="Degraded"} 1
llmkube_modelrouters{namespace="b",phase="Pending"} 0
llmkube_modelrouters{namespace="b",phase="Ready"} 0
`
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	names := []string{"llmkube_inferenceservice_gateways", "llmkube_inferenceservice_phase", "llmkube_inferenceservice_replicas_wanted", "llmkube_inferenceservice_replicas_ready",
		"llmkube_inferenceservice_rollout_deferred_seconds", "llmkube_inferenceservice_rollout_deferred", "llmkube_inferenceservices", "llmkube_modelrouter_backends",
		"llmkube_modelrouter_backends_resolved", "llmkube_modelrouters"}
	// Help texts are the collector's; compare values only.
	got, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		help := "x"
		f.Help = &help
	}
	if err := testutil.GatherAndCompare(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return got, nil }), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}
