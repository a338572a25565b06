/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

func serviceAC(port int32) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service("web", "ns").WithSpec(corev1ac.ServiceSpec().
		WithSelector(map[string]string{"app": "web"}).
		WithPorts(corev1ac.ServicePort().WithName("http").WithProtocol(corev1.ProtocolTCP).WithPort(port).WithTargetPort(intstr.FromInt32(port))))
}

// legacyService is a Service the records-based operator created (an Update by "manager"), as the
// API server's own field manager records it.
func legacyService(t *testing.T, writes ...write) *corev1.Service {
	t.Helper()
	fm := managedfieldstest.NewTestFieldManager(NewTypeConverter(scheme(t)), corev1.SchemeGroupVersion.WithKind("Service"))
	for _, w := range writes {
		var err error
		if w.update {
			err = fm.Update(u(t, w.obj), w.manager)
		} else {
			err = fm.Apply(u(t, w.obj), w.manager, w.force)
		}
		if err != nil {
			t.Fatalf("%s: %v", w.manager, err)
		}
	}
	live := &corev1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fm.Live().(*unstructured.Unstructured).Object, live); err != nil {
		t.Fatal(err)
	}
	live.ResourceVersion = "7"
	return live
}

func TestPlanMigratesAService(t *testing.T) {
	legacy := Legacy{FieldManagers: DefaultLegacyFieldManagers}
	live := legacyService(t, write{manager: "manager", update: true, obj: serviceAC(8080)})
	if !legacy.NeedsMigration(live, op) {
		t.Fatal("a Service only the legacy operator wrote needs the migration")
	}
	plan, err := legacy.Plan(live, op, serviceAC(8080))
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(plan.Patch, &ops); err != nil || len(ops) != 2 {
		t.Fatalf("a resourceVersion test and the managedFields: %s (%v)", plan.Patch, err)
	}
	var entries []metav1.ManagedFieldsEntry
	if err := json.Unmarshal(ops[1].Value, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Manager != op || entries[0].Operation != metav1.ManagedFieldsOperationApply || entries[0].APIVersion != "v1" {
		t.Fatalf("only the operator's Apply entry, for v1: %+v", entries)
	}
	owned, err := EntrySet(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := owned.ToJSON(); !containsAll(string(raw), `"f:ports"`, `"k:{\"port\":8080,\"protocol\":\"TCP\"}"`, `"f:selector"`) {
		t.Fatalf("the operator owns the port it applies: %s", raw)
	}
}

func TestNeedsMigrationOnce(t *testing.T) {
	legacy := Legacy{FieldManagers: DefaultLegacyFieldManagers}
	// The operator applied, then another controller called "manager" wrote by Update.
	live := legacyService(t,
		write{manager: op, obj: serviceAC(8080)},
		write{manager: "manager", update: true, obj: serviceAC(8080).WithLabels(map[string]string{"other": "x"})})
	if legacy.NeedsMigration(live, op) {
		t.Error("after the operator's own apply, a manager called like the legacy one is another controller")
	}
	live.Annotations = map[string]string{RecordLabels: "team"}
	if !legacy.NeedsMigration(live, op) {
		t.Error("a record annotation is the legacy operator's, whatever else is there")
	}
	live.Annotations = nil
	none := Legacy{FieldManagers: []string{}}
	if none.NeedsMigration(legacyService(t, write{manager: "manager", update: true, obj: serviceAC(8080)}), op) {
		t.Error("no legacy managers: nothing to migrate")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
