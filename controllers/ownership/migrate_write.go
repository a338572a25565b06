/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

// Part of the one-time migration from the records-based operator; deletable with migrate.go.

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Migrator runs the migration of one object (Deployment, Service, ConfigMap, HPA), before the
// apply to it.
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

// MigrateIfNeeded migrates live when it needs it (Legacy.NeedsMigration), and returns the object
// as it is afterwards (live itself when there was nothing to do). kind names the owner's kind for
// the metric. One generic function for every kind: T is *appsv1.Deployment, *corev1.Service, ...
//
// Note: the write is guarded by live's resourceVersion, so it can never roll back a newer write:
// on a conflict it reads the object again from the API server and plans again.
func MigrateIfNeeded[T client.Object](ctx context.Context, m Migrator, owner client.Object, kind string, live T, desired runtime.ApplyConfiguration) (T, error) {
	objKind := kindOf(desired)
	// Only the kinds the legacy operator wrote, and only objects the expected owner controls: any
	// other object with a `manager` entry is another controller's, and none of the operator's.
	if m.Client == nil || !slices.Contains(LegacyKinds, objKind) || CheckControlled(live, desired) != nil ||
		!m.Legacy.NeedsMigration(live, m.FieldManager) {
		return live, nil
	}
	key := client.ObjectKeyFromObject(live)
	logger := log.FromContext(ctx).WithValues("migrating", objKind, "object", key)
	current := live.DeepCopyObject().(T)
	for attempt := 1; ; attempt++ {
		plan, err := m.Legacy.Plan(current, m.FieldManager, desired)
		if err != nil {
			MigrationsTotal.WithLabelValues(kind, "failed").Inc()
			return live, Fail(objKind, key, StepMigrate, fmt.Errorf("planning: %w", err))
		}
		err = m.Client.Patch(ctx, current, client.RawPatch(types.JSONPatchType, plan.Patch), client.FieldOwner(m.FieldManager))
		if err == nil {
			MigrationsTotal.WithLabelValues(kind, "migrated").Inc()
			logger.Info("migrated legacy ownership", "labels", plan.Labels, "annotations", plan.Annotations, "invalid", plan.Invalid)
			m.report(ctx, owner, objKind, key, plan)
			return current, nil
		}
		fresh, moved := stale(ctx, m.Reader, current, err)
		if !moved || attempt == migrationAttempts {
			MigrationsTotal.WithLabelValues(kind, "failed").Inc()
			return live, Fail(objKind, key, StepMigrate, err)
		}
		logger.V(1).Info("the object changed under the migration; planning again", "attempt", attempt)
		if !m.Legacy.NeedsMigration(fresh, m.FieldManager) {
			return fresh, nil // someone else (another replica) migrated it
		}
		current = fresh
	}
}

// stale says whether err is the resourceVersion guard failing, and returns the object as the API
// server has it now. A failed JSON patch test comes back as a bare 422 with no cause, so the only
// reliable sign is a resourceVersion that moved.
func stale[T client.Object](ctx context.Context, reader client.Reader, tried T, err error) (T, bool) {
	var zero T
	if !apierrors.IsInvalid(err) && !apierrors.IsConflict(err) {
		return zero, false
	}
	// A new object, not tried: decoding into a used one would keep map keys the server dropped.
	fresh := reflect.New(reflect.TypeOf(tried).Elem()).Interface().(T)
	if reader.Get(ctx, client.ObjectKeyFromObject(tried), fresh) != nil {
		return zero, false
	}
	return fresh, fresh.GetResourceVersion() != tried.GetResourceVersion()
}

// report hands one migration to the reconcile's MigrationReport, or, when the caller runs none,
// records its Events at once.
func (m Migrator) report(ctx context.Context, owner client.Object, kind string, key client.ObjectKey, plan *Migration) {
	if r := migrationReportFrom(ctx); r != nil {
		r.add(kind, key, plan)
		return
	}
	r := &MigrationReport{}
	r.add(kind, key, plan)
	r.Emit(m.Recorder, owner, m)
}
