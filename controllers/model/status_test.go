/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// user is an InferenceService named name, Ready or not, whose rolled-out pods run generation
// loaded of Model m (0: none yet).
func user(name string, ready bool, loaded int64) inferencev1alpha1.InferenceService {
	i := inferencev1alpha1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 2}}
	s := metav1.ConditionFalse
	if ready {
		s = metav1.ConditionTrue
	}
	i.Status.Conditions = []metav1.Condition{{Type: inferencev1alpha1.ConditionReady, Status: s}}
	if loaded > 0 {
		i.Status.LoadedModel = &inferencev1alpha1.LoadedModel{Name: "m", Generation: loaded}
	}
	return i
}

// deferredUser serves generation 2 of Model m while its own newer generation waits for idle.
func deferredUser(name string) inferencev1alpha1.InferenceService {
	i := user(name, true, 2)
	i.Generation, i.Status.ObservedGeneration = 3, 2
	return i
}

// stalledUser is a user that cannot run until a person changes it (Stalled=True).
func stalledUser(name string) inferencev1alpha1.InferenceService {
	i := user(name, false, 0)
	i.Status.Conditions = append(i.Status.Conditions, metav1.Condition{Type: inferencev1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: "UnservedField"})
	return i
}

// A Stalled user never holds the Model Reconciling: only a change of that user ends it, and a
// Flux Kustomization of Models would wait on another team's InferenceService [I49].
func TestStalledUsersDoNotHoldTheModelReconciling(t *testing.T) {
	m := &inferencev1alpha1.Model{ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 2}}
	reconciling := func(users ...inferencev1alpha1.InferenceService) string {
		for _, c := range Status(m, users).Status.Conditions {
			if *c.Type == inferencev1alpha1.ConditionReconciling && *c.Status == metav1.ConditionTrue {
				return *c.Message
			}
		}
		return ""
	}
	if msg := reconciling(stalledUser("broken")); msg != "" {
		t.Fatalf("Reconciling by a Stalled user: %s", msg)
	}
	if msg := reconciling(stalledUser("broken"), user("loading", false, 0)); msg == "" || strings.Contains(msg, "broken") {
		t.Fatalf("Reconciling = %q, want it to name the loading user only", msg)
	}
}

func readyOf(t *testing.T, m *inferencev1alpha1.Model, users ...inferencev1alpha1.InferenceService) (string, string, inferencev1alpha1.Phase) {
	t.Helper()
	st := Status(m, users).Status
	for _, c := range st.Conditions {
		if *c.Type == inferencev1alpha1.ConditionReady {
			return string(*c.Status), *c.Reason, *st.Phase
		}
	}
	t.Fatal("no Ready condition")
	return "", "", ""
}

// Proves K9.
func TestReadyOnlyWhenAUserServes(t *testing.T) {
	m := &inferencev1alpha1.Model{ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 2}}
	for _, tc := range []struct {
		name   string
		users  []inferencev1alpha1.InferenceService
		status string
		reason string
		phase  inferencev1alpha1.Phase
	}{
		{"nobody names it [I49]", nil, "True", ReasonNotInUse, inferencev1alpha1.PhasePending},
		{"named only by a Stalled user [I49]", []inferencev1alpha1.InferenceService{stalledUser("a")}, "True", ReasonUsersStalled, inferencev1alpha1.PhasePending},
		{"a Stalled user and one loading", []inferencev1alpha1.InferenceService{stalledUser("a"), user("b", false, 0)}, "False", ReasonLoading, inferencev1alpha1.PhasePending},
		{"named, no ready pod", []inferencev1alpha1.InferenceService{user("a", false, 0)}, "False", ReasonLoading, inferencev1alpha1.PhasePending},
		{"ready pods of the Model's older generation [K6]", []inferencev1alpha1.InferenceService{user("a", true, 1)}, "False", ReasonLoading, inferencev1alpha1.PhasePending},
		{"serving while the gate holds an unrelated change back (observedGeneration behind)", []inferencev1alpha1.InferenceService{deferredUser("a")}, "True", ReasonLoaded, inferencev1alpha1.PhaseReady},
		{"one of two serves", []inferencev1alpha1.InferenceService{user("a", false, 0), user("b", true, 2)}, "True", ReasonLoaded, inferencev1alpha1.PhaseReady},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, r, p := readyOf(t, m, tc.users...)
			if s != tc.status || r != tc.reason || p != tc.phase {
				t.Fatalf("Ready = %s/%s phase %s, want %s/%s phase %s", s, r, p, tc.status, tc.reason, tc.phase)
			}
		})
	}
}

func TestUsedByIsSortedAndBounded(t *testing.T) {
	m := &inferencev1alpha1.Model{ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 1}}
	var users []inferencev1alpha1.InferenceService
	for i := MaxUsedBy + 4; i > 0; i-- {
		users = append(users, user(fmt.Sprintf("isvc-%02d", i), false, 0))
	}
	st := Status(m, users).Status
	if *st.InferenceServices != int32(MaxUsedBy+4) || len(st.UsedBy) != MaxUsedBy || st.UsedBy[0] != "isvc-01" {
		t.Fatalf("count %d, usedBy %v", *st.InferenceServices, st.UsedBy)
	}
	// The same users in another order give the same status: no write flaps on list order.
	a, _ := json.Marshal(Status(m, users).Status.UsedBy)
	slices.Reverse(users)
	b, _ := json.Marshal(Status(m, users).Status.UsedBy)
	if string(a) != string(b) {
		t.Fatalf("status depends on list order:\n%s\n%s", a, b)
	}
}
