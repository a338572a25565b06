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
	// ReasonNotInUse: no InferenceService names the Model, so nothing downloads it; Ready=True, since nothing is pending.
	ReasonNotInUse = "NotInUse"
	// ReasonLoading: InferenceServices name it and none has a ready pod yet (Ready=False).
	ReasonLoading = "Loading"
	// ReasonUsersStalled: InferenceServices name it, none serves it, and every one of them is
	// Stalled (its Model field unserved, an object of its name someone else's): nothing of the
	// Model's own is pending, so the Model is Ready and says whose fault it is.
	ReasonUsersStalled = "UsersStalled"
)

// MaxUsedBy is how many names status.usedBy lists (the CRD's maxItems); the count has them all.
const MaxUsedBy = 16

// Serving says whether isvc serves generation gen of Model name: it is Ready (a runtime pod
// answers its readiness probe, which a runtime does only once its model is loaded) and every pod
// of its rolled-out template runs that Model at that generation (status.loadedModel).
//
// Note: Ready alone is not enough (the pods of the old template serve the Model's previous
// generation until the new template rolled out), and observedGeneration is too much (a rollout
// the gate holds back for an unrelated change keeps the Model loaded).
func Serving(isvc *inferencev1alpha1.InferenceService, name string, gen int64) bool {
	l := isvc.Status.LoadedModel
	return ready(isvc) && l != nil && l.Name == name && l.Generation == gen
}

// stalled says whether isvc cannot run until a person changes it (Stalled=True).
func stalled(isvc *inferencev1alpha1.InferenceService) bool {
	return meta.IsStatusConditionTrue(isvc.Status.Conditions, inferencev1alpha1.ConditionStalled)
}

func ready(isvc *inferencev1alpha1.InferenceService) bool {
	return meta.IsStatusConditionTrue(isvc.Status.Conditions, inferencev1alpha1.ConditionReady)
}

// Status is the status the operator wants for m, given the InferenceServices that name it (in
// any order). The table, decided here alone:
//
//	state                                      | Ready             | Reconciling   | phase
//	no InferenceService names it               | True NotInUse     | -             | Pending
//	named, none serves this generation yet     | False Loading     | True Loading  | Pending
//	named, none serves it, every one Stalled   | True UsersStalled | -             | Pending
//	one serves it                              | True Loaded       | -             | Ready
//	one serves it, another still rolls it out  | True Loaded       | True Loading  | Ready
//
// A Model is Current to kstatus (Flux, kubectl wait) and Healthy to Argo CD whenever nothing of
// its own is pending: a Model nobody uses is not in progress (Flux would wait for it forever),
// and a user that is Stalled (another team's broken InferenceService, say) never holds it
// Reconciling, since only a change of that user ends it. A user that is not Stalled and does not
// serve it yet does hold it: its pods are downloading or loading this Model.
//
// Conditions keep their lastTransitionTime while their status stays, so the same inputs yield
// the same status.
func Status(m *inferencev1alpha1.Model, users []inferencev1alpha1.InferenceService) *acv1alpha1.ModelApplyConfiguration {
	var names, serving, loading, stalledUsers []string
	for i := range users {
		names = append(names, users[i].Name)
		switch {
		case Serving(&users[i], m.Name, m.Generation):
			serving = append(serving, users[i].Name)
		case stalled(&users[i]):
			stalledUsers = append(stalledUsers, users[i].Name)
		default:
			loading = append(loading, users[i].Name)
		}
	}
	slices.Sort(names)
	slices.Sort(serving)
	slices.Sort(loading)
	slices.Sort(stalledUsers)

	ready := metav1.Condition{Type: inferencev1alpha1.ConditionReady, ObservedGeneration: m.Generation}
	phase := inferencev1alpha1.PhasePending
	switch {
	case len(serving) > 0:
		ready.Status, ready.Reason = metav1.ConditionTrue, ReasonLoaded
		ready.Message = fmt.Sprintf("loaded: InferenceService %s serves generation %d", listed(serving), m.Generation)
		phase = inferencev1alpha1.PhaseReady
	case len(names) == 0:
		ready.Status, ready.Reason = metav1.ConditionTrue, ReasonNotInUse
		ready.Message = fmt.Sprintf("no InferenceService names this Model, so nothing downloads or loads it: set spec.modelRef: %s on one", m.Name)
	case len(loading) == 0:
		ready.Status, ready.Reason = metav1.ConditionTrue, ReasonUsersStalled
		ready.Message = fmt.Sprintf("InferenceService %s names this Model and none serves it: each is Stalled, for a reason of its own (see its conditions); nothing of this Model is pending", listed(stalledUsers))
	default:
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonLoading
		ready.Message = fmt.Sprintf("InferenceService %s names this Model and none serves generation %d yet: its pods of this generation are not rolled out, or the runtime is downloading or loading the weights, or cannot start (see its conditions)", listed(names), m.Generation)
	}
	var health status.Health
	if len(loading) > 0 {
		health.Reconciling = &status.Cause{Reason: ReasonLoading,
			Message: fmt.Sprintf("InferenceService %s does not serve generation %d yet", listed(loading), m.Generation)}
	}
	conds := append([]metav1.Condition(nil), m.Status.Conditions...)
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type: inferencev1alpha1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: ReasonAccepted,
		Message:            "the spec passed admission and the operator saw it; the runtime of each InferenceService that names it downloads it into the cache",
		ObservedGeneration: m.Generation,
	})
	meta.SetStatusCondition(&conds, ready)
	status.SetHealth(&conds, m.Generation, health)

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
	switch t {
	case inferencev1alpha1.ConditionReady, inferencev1alpha1.ConditionAccepted, inferencev1alpha1.ConditionReconciling, inferencev1alpha1.ConditionStalled:
		return true
	}
	return false
}

// listed names up to three InferenceServices, and how many more there are.
func listed(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
