/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/llmkube/operator/controllers/ownership"
)

func newService() *corev1.Service { return &corev1.Service{} }

func TestOfNamesTheObjectFromItsApplyConfiguration(t *testing.T) {
	o := Of(corev1ac.Service("s", "ns"), newService, corev1ac.ExtractService)
	if o.Kind != "Service" || o.Key.Name != "s" || o.Key.Namespace != "ns" || o.GVK().Version != "v1" {
		t.Fatalf("kind %q key %v gvk %v", o.Kind, o.Key, o.GVK())
	}
}

// What the operator would send is decided by what its field manager owns, never by the live
// object: a field another writer added (or a list it reordered) is no change of the operator's.
func TestWouldApplyAsksWhatTheFieldManagerOwns(t *testing.T) {
	desired := func() *corev1ac.ServiceApplyConfiguration {
		return corev1ac.Service("s", "ns").WithSpec(corev1ac.ServiceSpec().WithType(corev1.ServiceTypeClusterIP))
	}
	o := Of(desired(), newService, corev1ac.ExtractService)
	if send, err := o.WouldApply(nil, "op"); err != nil || !send {
		t.Fatalf("absent object: send %v, %v", send, err)
	}
	// Of marks the object as the operator's (ownership.MarkManaged), as its apply does.
	owned := fieldpath.NewSet(fieldpath.MakePathOrDie("spec", "type"), fieldpath.MakePathOrDie("metadata", "labels", ownership.LabelManagedBy))
	raw, err := owned.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	live := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", Labels: map[string]string{ownership.LabelManagedBy: ownership.ManagedBy}, ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "op", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw},
		}}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone, ExternalName: "set.by.someone.else"},
	}
	if send, err := o.WouldApply(live, "op"); err != nil || send {
		t.Fatalf("owned equals desired: send %v, %v", send, err)
	}
	changed := Of(desired().WithLabels(map[string]string{"a": "b"}), newService, corev1ac.ExtractService)
	if send, err := changed.WouldApply(live, "op"); err != nil || !send {
		t.Fatalf("a new label: send %v, %v", send, err)
	}
}
