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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Migrator runs the migration of one Deployment, before the first apply to it.
type Migrator struct {
	Client client.Client
	// Reader reads past the cache, for the retry after a conflict.
	Reader       client.Reader
	Recorder     events.EventRecorder
	FieldManager string
	Legacy       Legacy
}

// migrationAttempts bounds the retries when another writer changes the Deployment between the
// read and the migration write.
const migrationAttempts = 5

// MigrateIfNeeded migrates live when it carries legacy traces, and returns the Deployment as it
// is afterwards (live itself when there was nothing to do). kind names the owner's kind for the
// metric.
//
// Note: the write is guarded by live's resourceVersion, so it can never roll back a newer write:
// on a conflict it reads the Deployment again from the API server and plans again.
func (m Migrator) MigrateIfNeeded(ctx context.Context, owner client.Object, kind string, live *appsv1.Deployment, desired runtime.ApplyConfiguration) (*appsv1.Deployment, error) {
	if live == nil || !m.Legacy.HasTraces(live) {
		return live, nil
	}
	logger := log.FromContext(ctx).WithValues("deployment", live.Name)
	current := live.DeepCopy()
	for attempt := 1; ; attempt++ {
		plan, err := m.Legacy.Plan(current, m.FieldManager, desired)
		if err != nil {
			MigrationsTotal.WithLabelValues(kind, "failed").Inc()
			return live, fmt.Errorf("planning the migration of legacy ownership: %w", err)
		}
		err = m.Client.Patch(ctx, current, client.RawPatch(types.JSONPatchType, plan.Patch), client.FieldOwner(m.FieldManager))
		if err == nil {
			MigrationsTotal.WithLabelValues(kind, "migrated").Inc()
			logger.Info("migrated legacy ownership", "labels", plan.Labels, "annotations", plan.Annotations, "invalid", plan.Invalid)
			m.report(owner, live.Name, plan)
			return current, nil
		}
		fresh, stale := m.stale(ctx, current, err)
		if !stale || attempt == migrationAttempts {
			MigrationsTotal.WithLabelValues(kind, "failed").Inc()
			return live, fmt.Errorf("migrating legacy ownership of Deployment %s: %w", live.Name, err)
		}
		logger.V(1).Info("the Deployment changed under the migration; planning again", "attempt", attempt)
		if !m.Legacy.HasTraces(fresh) {
			return fresh, nil // someone else (another replica) migrated it
		}
		current = fresh
	}
}

// stale says whether err is the resourceVersion guard failing, and returns the Deployment as the
// API server has it now. A failed JSON patch test comes back as a bare 422 with no cause, so the
// only reliable sign is a resourceVersion that moved.
func (m Migrator) stale(ctx context.Context, tried *appsv1.Deployment, err error) (*appsv1.Deployment, bool) {
	if !apierrors.IsInvalid(err) && !apierrors.IsConflict(err) {
		return nil, false
	}
	fresh := &appsv1.Deployment{}
	if m.Reader.Get(ctx, client.ObjectKeyFromObject(tried), fresh) != nil {
		return nil, false
	}
	return fresh, fresh.ResourceVersion != tried.ResourceVersion
}

func (m Migrator) report(owner client.Object, name string, plan *Migration) {
	if m.Recorder == nil {
		return
	}
	m.Recorder.Eventf(owner, nil, corev1.EventTypeNormal, "OwnershipMigrated", "MigrateOwnership",
		"Deployment %s: field manager %s took over pod labels [%s] and pod annotations [%s] from the legacy operator's records and Update entries (%s); the records were removed",
		name, m.FieldManager, strings.Join(plan.Labels, ", "), strings.Join(plan.Annotations, ", "), strings.Join(m.Legacy.FieldManagers, ", "))
	if len(plan.Invalid) > 0 {
		m.Recorder.Eventf(owner, nil, corev1.EventTypeWarning, "LegacyRecordInvalid", "MigrateOwnership",
			"Deployment %s: ignored record entries that are not valid keys: [%s]", name, strings.Join(plan.Invalid, ", "))
	}
}
