/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestOwnWritesPredicate(t *testing.T) {
	w := &OwnWrites{FieldManager: "op"}
	p := w.Predicate()
	dep := func(rv string, managers ...metav1.ManagedFieldsEntry) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", UID: "u1", ResourceVersion: rv, ManagedFields: managers}}
	}
	ours := metav1.ManagedFieldsEntry{Manager: "op", Operation: metav1.ManagedFieldsOperationApply}
	theirs := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}

	// The answer of an apply, decoded into the apply configuration.
	ac := appsv1ac.Deployment("d", "ns")
	ac.UID, ac.ResourceVersion = ptr.To(types.UID("u1")), ptr.To("7")
	w.Record(ac)

	checkPredicate(t, []predicateCase{
		{"create of an object the operator applied", false, p.Create(event.CreateEvent{Object: dep("7", ours)})},
		{"create of an object someone else wrote", true, p.Create(event.CreateEvent{Object: dep("7", theirs)})},
		{"update to the operator's own resourceVersion", false, p.Update(event.UpdateEvent{ObjectOld: dep("6", ours), ObjectNew: dep("7", ours)})},
		{"update to a later resourceVersion", true, p.Update(event.UpdateEvent{ObjectOld: dep("7", ours), ObjectNew: dep("8", ours, theirs)})},
		{"delete", true, p.Delete(event.DeleteEvent{Object: dep("8", ours)})},
		{"update after the delete forgot it", true, p.Update(event.UpdateEvent{ObjectOld: dep("6", ours), ObjectNew: dep("7", ours)})},
	})
	var none *OwnWrites
	none.Record(ac)
	if !none.Predicate().Create(event.CreateEvent{Object: dep("7", ours)}) {
		t.Error("a nil OwnWrites must let every event through")
	}
}

// A watch that starts after the operator wrote objects of its kind (the Gateway API kinds) keeps
// an initial-list create that carries someone else's later write (a Gateway's report): the
// owner's own create event came before the watch existed, and nothing else would reconcile it.
func TestOwnWritesPredicateStartedLate(t *testing.T) {
	w := &OwnWrites{FieldManager: "op"}
	p := TypedPredicateStartedLate[*appsv1.Deployment](w)
	dep := func(rv string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", UID: "u1", ResourceVersion: rv,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "op", Operation: metav1.ManagedFieldsOperationApply}}}}
	}
	ac := appsv1ac.Deployment("d", "ns")
	ac.UID, ac.ResourceVersion = ptr.To(types.UID("u1")), ptr.To("7")
	w.Record(ac)
	checkPredicate(t, []predicateCase{
		{"initial list, a write after the operator's", true, p.Create(event.TypedCreateEvent[*appsv1.Deployment]{Object: dep("8"), IsInInitialList: true})},
		{"initial list, at the operator's own write", false, p.Create(event.TypedCreateEvent[*appsv1.Deployment]{Object: dep("7"), IsInInitialList: true})},
		{"a create after the initial list, of an object the operator applied", false, p.Create(event.TypedCreateEvent[*appsv1.Deployment]{Object: dep("8")})},
		{"update to the operator's own resourceVersion", false, p.Update(event.TypedUpdateEvent[*appsv1.Deployment]{ObjectOld: dep("6"), ObjectNew: dep("7")})},
	})
}

// predicateCase is one event: whether the predicate should pass it, and whether it did.
type predicateCase struct {
	name string
	pass bool
	got  bool
}

func checkPredicate(t *testing.T, cases []predicateCase) {
	t.Helper()
	for _, c := range cases {
		if c.got != c.pass {
			t.Errorf("%s: passed=%v, want %v", c.name, c.got, c.pass)
		}
	}
}
