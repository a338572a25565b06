/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// MigrationsTotal counts migrations of legacy ownership (of any applied kind), by the kind of the
// owning object (InferenceService, ModelRouter) and the result (migrated, failed).
var MigrationsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "llmkube_ownership_migrations_total",
	Help: "Objects (Deployment, Service, ConfigMap, HPA) whose legacy ownership was migrated to the operator's managedFields entry, by owner kind and result.",
}, []string{"kind", "result"})

// ConflictsTotal counts forced applies that took fields back from another field manager, by the
// kind of the applied object and that manager (bounded, see conflictManagers).
var ConflictsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "llmkube_ownership_conflicts_total",
	Help: "Applies that took fields back from another field manager (the OwnershipConflict Event), by applied kind and the other manager (the first 20 managers seen by name, later ones as \"other\").",
}, []string{"kind", "manager"})

// Collectors are the metrics of this package, for the operator's registry.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{MigrationsTotal, ConflictsTotal}
}

func init() {
	// Note: always present, not only after the first migration: a dashboard or an alert on
	// rate() or absent() then sees 0 instead of nothing.
	for _, kind := range []string{"InferenceService", "ModelRouter"} {
		for _, result := range []string{"migrated", "failed"} {
			MigrationsTotal.WithLabelValues(kind, result)
		}
	}
}

// maxConflictManagers bounds the manager label: a field manager's name is chosen by whoever
// writes (any kubectl --field-manager), so an unbounded label would let writers grow the
// operator's series without limit.
const maxConflictManagers = 20

// OtherManager is the manager label of every manager after the first maxConflictManagers.
const OtherManager = "other"

var conflictManagers = struct {
	sync.Mutex
	seen map[string]bool
}{seen: map[string]bool{}}

// conflictManager is the label value for manager: its name (without the " (Update)" suffix
// Conflict.Managers carries) while fewer than maxConflictManagers names have been seen.
func conflictManager(manager string) string {
	manager = strings.TrimSuffix(manager, " (Update)")
	conflictManagers.Lock()
	defer conflictManagers.Unlock()
	if conflictManagers.seen[manager] {
		return manager
	}
	if len(conflictManagers.seen) >= maxConflictManagers {
		return OtherManager
	}
	conflictManagers.seen[manager] = true
	return manager
}

// countConflicts adds one to ConflictsTotal per manager that lost fields in this apply.
func countConflicts(kind string, conflicts []Conflict) {
	counted := map[string]bool{}
	for _, c := range conflicts {
		for _, m := range c.Managers {
			label := conflictManager(m)
			if !counted[label] {
				counted[label] = true
				ConflictsTotal.WithLabelValues(kind, label).Inc()
			}
		}
	}
}
