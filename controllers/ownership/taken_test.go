/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"testing"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTakenNames: a name is remembered per kind, forgotten per kind by a read, and for every kind
// by a delete event; a nil OwnWrites remembers nothing.
func TestTakenNames(t *testing.T) {
	key := client.ObjectKey{Namespace: "ns", Name: "m"}
	svc, dep := corev1ac.Service("m", "ns"), appsv1ac.Deployment("m", "ns")
	w := &OwnWrites{}
	w.RememberTaken(svc, key)
	if !w.Taken(svc, key) || w.Taken(dep, key) || w.Taken(svc, client.ObjectKey{Namespace: "ns", Name: "other"}) {
		t.Fatal("want the Service's name taken, and neither the Deployment's nor another name")
	}
	w.RememberTaken(dep, key)
	w.ForgetTaken(svc, key)
	if w.Taken(svc, key) || !w.Taken(dep, key) {
		t.Fatal("ForgetTaken of the Service forgot the Deployment too, or not the Service")
	}
	w.RememberTaken(svc, key)
	w.taken.forgetName(key)
	if w.Taken(svc, key) || w.Taken(dep, key) || len(w.taken.names) != 0 {
		t.Fatalf("a delete event left names remembered: %v", w.taken.names)
	}
	var none *OwnWrites
	none.RememberTaken(svc, key)
	if none.Taken(svc, key) {
		t.Fatal("a nil OwnWrites remembered a name")
	}
}
