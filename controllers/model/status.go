/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package model

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/controllers/status"
)

// Reasons of a Model's conditions.
const (
	// ReasonAccepted: the operator saw the spec, which admission validated (condition Accepted).
	ReasonAccepted = "Accepted"
	// ReasonLoaded: an InferenceService that names the Model has a ready pod (Ready=True).
	ReasonLoaded = "Loaded"
	// ReasonNotInUse: no InferenceService names the Model, so nothing downloads it (Ready=False).
	ReasonNotInUse = "NotInUse"
	// ReasonLoading: InferenceServices name it and none has a ready pod yet (Ready=False).
	ReasonLoading = "Loading"
)

// MaxUsedBy is how many names status.usedBy lists (the CRD's maxItems); the count has them all.
const MaxUsedBy = 16

// Serving says whether isvc has a ready runtime pod for its current generation: the one sign the
// operator has that the weights were downloaded and loaded (a runtime's readiness probe answers
// only once its model is loaded).
func Serving(isvc *inferencev1alpha1.InferenceService) bool {
	return isvc.Status.ReadyReplicas > 0 && isvc.Status.ObservedGeneration == isvc.Generation
}

// Status is the status the operator wants for m, given the InferenceServices that name it (in
// any order): Accepted, and Ready only when one of them serves. Conditions keep their
// lastTransitionTime while their status stays, so the same inputs yield the same status.
func Status(m *inferencev1alpha1.Model, users []inferencev1alpha1.InferenceService) *acv1alpha1.ModelApplyConfiguration {
	var names, serving []string
	for i := range users {
		names = append(names, users[i].Name)
		if Serving(&users[i]) {
			serving = append(serving, users[i].Name)
		}
	}
	slices.Sort(names)
	slices.Sort(serving)

	ready := metav1.Condition{Type: inferencev1alpha1.ConditionReady, ObservedGeneration: m.Generation}
	phase := inferencev1alpha1.PhasePending
	switch {
	case len(serving) > 0:
		ready.Status, ready.Reason = metav1.ConditionTrue, ReasonLoaded
		ready.Message = fmt.Sprintf("loaded: InferenceService %s has a ready pod", listed(serving))
		phase = inferencev1alpha1.PhaseReady
	case len(names) == 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonNotInUse
		ready.Message = fmt.Sprintf("no InferenceService names this Model, so nothing downloads or loads it: set spec.modelRef: %s on one", m.Name)
	default:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonLoading
		ready.Message = fmt.Sprintf("InferenceService %s names this Model and none has a ready pod yet: the runtime is downloading or loading the weights, or cannot start (see its conditions)", listed(names))
	}
	conds := append([]metav1.Condition(nil), m.Status.Conditions...)
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type: inferencev1alpha1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: ReasonAccepted,
		Message:            "the spec passed admission and the operator saw it; the runtime of each InferenceService that names it downloads it into the cache",
		ObservedGeneration: m.Generation,
	})
	meta.SetStatusCondition(&conds, ready)

	// Note: the counts are sent even when zero, so kubectl get shows 0 in USED-BY and SERVING
	// rather than an empty cell; their Go fields have no omitempty, so the extraction of what the
	// field manager owns holds the 0 it sent and a converged Model is not written again.
	st := acv1alpha1.ModelKindStatus().
		WithObservedGeneration(m.Generation).
		WithPhase(phase).
		WithInferenceServices(int32(len(names))).
		WithReadyInferenceServices(int32(len(serving))).
		WithConditions(status.ConditionsToApply(conds, owns)...)
	if n := len(names); n > 0 {
		st.WithUsedBy(names[:min(n, MaxUsedBy)]...)
	}
	return acv1alpha1.Model(m.Name, m.Namespace).WithStatus(st)
}

func owns(t string) bool {
	return t == inferencev1alpha1.ConditionReady || t == inferencev1alpha1.ConditionAccepted
}

// listed names up to three InferenceServices, and how many more there are.
func listed(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
