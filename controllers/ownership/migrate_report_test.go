/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// One reconcile that migrates a Deployment and a Service records one Event naming both, and the
// Warning for invalid record entries once.
func TestMigrationReportIsOneEventPerReconcile(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	m := Migrator{Recorder: rec, FieldManager: DefaultFieldManager, Legacy: Legacy{FieldManagers: []string{"manager"}}}
	owner := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: "ns", Name: "llama"}
	ctx, report := WithMigrationReport(context.Background())
	m.report(ctx, owner, "Deployment", key, &Migration{Labels: []string{"team", "tier"}, Annotations: []string{"example.com/owner"}, Invalid: []string{"not a key"}})
	m.report(ctx, owner, "Service", key, &Migration{})
	if len(rec.Events) != 0 {
		t.Fatalf("recorded before the reconcile ended: %q", <-rec.Events)
	}
	report.Emit(rec, owner, m)
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	if len(got) != 2 {
		t.Fatalf("got %d Events, want one OwnershipMigrated and one LegacyRecordInvalid: %q", len(got), got)
	}
	for _, want := range []string{"Normal OwnershipMigrated", "Deployment ns/llama (pod labels [team, tier] and pod annotations [example.com/owner]", "Service ns/llama", "Update entries (manager)"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("%q does not contain %q", got[0], want)
		}
	}
	if !strings.Contains(got[1], "Warning LegacyRecordInvalid") || !strings.Contains(got[1], "[not a key]") {
		t.Errorf("second Event %q, want the invalid record entries", got[1])
	}
}

// Without a report (a caller outside the reconcile loop), a migration records its Event at once.
func TestMigrationWithoutReportRecordsAtOnce(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	m := Migrator{Recorder: rec, FieldManager: DefaultFieldManager}
	m.report(context.Background(), &corev1.ConfigMap{}, "Service", client.ObjectKey{Namespace: "ns", Name: "a"}, &Migration{})
	if len(rec.Events) != 1 {
		t.Fatalf("got %d Events, want 1", len(rec.Events))
	}
	if e := <-rec.Events; !strings.Contains(e, "took over from the legacy operator's records: Service ns/a") {
		t.Errorf("Event %q", e)
	}
}
