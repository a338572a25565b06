/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

// Part of the one-time migration from the records-based operator; deletable with migrate.go.

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MigrationReport gathers what one reconcile of an owner migrated, so that the owner gets one
// OwnershipMigrated Event for all of its objects instead of one per object. The Events API folds
// a second Event of the same reason on the same object into a series, so one per object cost an
// upgrade a POST and a PATCH of the Event for every InferenceService (its Deployment and its
// Service); one Event per reconcile costs one POST.
type MigrationReport struct {
	mu      sync.Mutex
	taken   []string // one phrase per migrated object, in migration order
	invalid []string
}

type migrationReportKey struct{}

// WithMigrationReport is ctx carrying a new report: the migrations run under it are reported by
// its Emit, not one by one. converge.Loop wraps every reconcile's Apply in one.
func WithMigrationReport(ctx context.Context) (context.Context, *MigrationReport) {
	r := &MigrationReport{}
	return context.WithValue(ctx, migrationReportKey{}, r), r
}

func migrationReportFrom(ctx context.Context) *MigrationReport {
	r, _ := ctx.Value(migrationReportKey{}).(*MigrationReport)
	return r
}

// add records one migrated object.
func (r *MigrationReport) add(kind string, key client.ObjectKey, plan *Migration) {
	phrase := fmt.Sprintf("%s %s (the fields it applies)", kind, key)
	if kind == "Deployment" {
		phrase = fmt.Sprintf("Deployment %s (pod labels [%s] and pod annotations [%s]; the records were removed)",
			key, strings.Join(plan.Labels, ", "), strings.Join(plan.Annotations, ", "))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.taken = append(r.taken, phrase)
	if len(plan.Invalid) > 0 {
		r.invalid = append(r.invalid, fmt.Sprintf("%s %s: [%s]", kind, key, strings.Join(plan.Invalid, ", ")))
	}
}

// Emit records the report's Events on owner: one Normal OwnershipMigrated naming every object
// taken over, and one Warning LegacyRecordInvalid when a record held entries that are not keys.
// Nothing migrated, nothing recorded.
func (r *MigrationReport) Emit(rec events.EventRecorder, owner runtime.Object, m Migrator) {
	if r == nil || rec == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.taken) > 0 {
		from := "the legacy operator's records"
		if len(m.Legacy.FieldManagers) > 0 {
			from += " and Update entries (" + strings.Join(m.Legacy.FieldManagers, ", ") + ")"
		}
		rec.Eventf(owner, nil, corev1.EventTypeNormal, "OwnershipMigrated", "MigrateOwnership",
			"field manager %s took over from %s: %s", m.FieldManager, from, strings.Join(r.taken, "; "))
	}
	if len(r.invalid) > 0 {
		rec.Eventf(owner, nil, corev1.EventTypeWarning, "LegacyRecordInvalid", "MigrateOwnership",
			"ignored record entries that are not valid keys: %s", strings.Join(r.invalid, "; "))
	}
	r.taken, r.invalid = nil, nil
}
