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

	cases := []struct {
		name string
		pass bool
		got  bool
	}{
		{"create of an object the operator applied", false, p.Create(event.CreateEvent{Object: dep("7", ours)})},
		{"create of an object someone else wrote", true, p.Create(event.CreateEvent{Object: dep("7", theirs)})},
		{"update to the operator's own resourceVersion", false, p.Update(event.UpdateEvent{ObjectOld: dep("6", ours), ObjectNew: dep("7", ours)})},
		{"update to a later resourceVersion", true, p.Update(event.UpdateEvent{ObjectOld: dep("7", ours), ObjectNew: dep("8", ours, theirs)})},
		{"delete", true, p.Delete(event.DeleteEvent{Object: dep("8", ours)})},
		{"update after the delete forgot it", true, p.Update(event.UpdateEvent{ObjectOld: dep("6", ours), ObjectNew: dep("7", ours)})},
	}
	for _, c := range cases {
		if c.got != c.pass {
			t.Errorf("%s: passed=%v, want %v", c.name, c.got, c.pass)
		}
	}
	var none *OwnWrites
	none.Record(ac)
	if !none.Predicate().Create(event.CreateEvent{Object: dep("7", ours)}) {
		t.Error("a nil OwnWrites must let every event through")
	}
}
