/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package rollout

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

func waits(t *testing.T) (uint64, float64) {
	t.Helper()
	m := &dto.Metric{}
	if err := WaitSeconds.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// A change that waited and now rolls is observed once, with how long it waited; a decision to
// keep waiting, or a roll that never waited, is not.
func TestGateObservesHowLongARollWaited(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	g := &Gate{Now: func() time.Time { return now }}
	isvc := &inferencev1alpha1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"},
		Spec: inferencev1alpha1.InferenceServiceSpec{Runtime: inferencev1alpha1.RuntimeGeneric,
			RolloutPolicy: &inferencev1alpha1.RolloutPolicy{WaitForIdle: ptr.To(true)}},
	}
	since := now.Add(-90 * time.Second)
	count0, sum0 := waits(t)

	d, err := g.Decide(context.Background(), isvc, "m", "http", &since)
	if err != nil || d.Roll {
		t.Fatalf("without force a runtime without an in-flight metric waits: %+v %v", d, err)
	}
	if c, _ := waits(t); c != count0 {
		t.Fatalf("a wait that goes on was observed")
	}

	isvc.Spec.RolloutPolicy.Force = ptr.To(true)
	if d, err := g.Decide(context.Background(), isvc, "m", "http", nil); err != nil || !d.Roll {
		t.Fatalf("with force it rolls: %+v %v", d, err)
	}
	if c, _ := waits(t); c != count0 {
		t.Fatalf("a roll that never waited was observed")
	}

	if d, err := g.Decide(context.Background(), isvc, "m", "http", &since); err != nil || !d.Roll {
		t.Fatalf("with force it rolls: %+v %v", d, err)
	}
	c, sum := waits(t)
	if c != count0+1 || sum-sum0 != 90 {
		t.Fatalf("observed %d waits summing %vs, want one of 90s", c-count0, sum-sum0)
	}
}
