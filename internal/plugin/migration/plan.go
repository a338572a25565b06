/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package migration previews the operator's one-time migration from the records-based operator:
// for one object with legacy traces, what the migration write takes over and drops, and what the
// first apply after it prunes, keeps and leaves unowned. It runs the operator's own planning code
// (controllers/ownership) and desired-state builders, then the API server's field manager on the
// result, and writes nothing.
package migration

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin/managed"
)

// Actions on one key.
const (
	// ActionTakeOver: the operator's apply owns the key from now on (from a record, from the
	// desired state, or adopted) and keeps it.
	ActionTakeOver = "take over"
	// ActionPrune: the first apply deletes the key (the pods roll).
	ActionPrune = "prune"
	// ActionKeep: another manager owns the key; the operator leaves it alone.
	ActionKeep = "keep"
	// ActionRelease: only the legacy operator owned the key; afterwards nobody does, so it stays
	// for good unless someone deletes it.
	ActionRelease = "release (unowned)"
	// ActionUnowned: nobody owned the key before and nobody will.
	ActionUnowned = "unowned"
	// ActionAdd: the first apply adds the key (the pods roll).
	ActionAdd = "add"
	// ActionChange: the first apply changes the key's value (the pods roll).
	ActionChange = "change"
	// ActionOperator: the operator already owned and keeps the key.
	ActionOperator = "operator"
)

// Options are the operator's flags that decide the migration and the desired state.
type Options struct {
	FieldManager string
	Legacy       ownership.Legacy
}

// Candidate is one Deployment the operator applies, with what it would apply.
type Candidate struct {
	// Owner names the InferenceService or ModelRouter: isvc/NAME or mr/NAME.
	Owner string
	Live  *appsv1.Deployment
	// Desired is the Deployment the reconciler hands the migration.
	Desired *appsv1ac.DeploymentApplyConfiguration
	// Apply is the Deployment the reconciler applies once migrated is the live Deployment.
	Apply func(migrated *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error)
}

// Key is what happens to one pod-template key.
type Key struct {
	Part  string `json:"part"`
	Key   string `json:"key"`
	Value string `json:"value"`
	// After is the value after the first apply, absent when pruned.
	After  *string `json:"after,omitempty"`
	Action string  `json:"action"`
	// Owners after the first apply.
	Owners []managed.Owner `json:"owners"`
}

// Outcome is the state after the migration write and the first apply.
type Outcome struct {
	Adopt bool  `json:"adoptLegacyOwnership"`
	Keys  []Key `json:"keys"`
	// Rolls says whether the first apply changes the pod template.
	Rolls bool `json:"rolls"`
	// TakenOver, Pruned, Unowned and Kept list keys as "label:KEY" and "annotation:KEY".
	TakenOver []string `json:"takenOver"`
	Pruned    []string `json:"pruned"`
	Unowned   []string `json:"unowned"`
	Kept      []string `json:"kept"`
}

// Plan is the preview of one object's migration.
type Plan struct {
	Owner      string `json:"owner"`
	Namespace  string `json:"namespace"`
	Deployment string `json:"deployment"`
	// LegacyManagersDropped are the Update entries the migration write removes.
	LegacyManagersDropped []string `json:"legacyManagersDropped"`
	// RecordsRemoved are the record and hash annotations the migration write removes.
	RecordsRemoved []string `json:"recordsRemoved"`
	// InvalidRecordEntries are record entries that are not keys; the migration ignores them.
	InvalidRecordEntries []string `json:"invalidRecordEntries,omitempty"`
	// Outcome is with the operator's --adopt-legacy-ownership as given, Alternative with the
	// opposite.
	Outcome     Outcome `json:"outcome"`
	Alternative Outcome `json:"alternative"`
}

// Prunes says whether the migration would delete anything.
func (p *Plan) Prunes() bool { return len(p.Outcome.Pruned) > 0 }

// ForDeployment previews c's migration; nil when c.Live carries no legacy trace.
func ForDeployment(c Candidate, o Options) (*Plan, error) {
	if !o.Legacy.HasTraces(c.Live) {
		return nil, nil
	}
	p := &Plan{Owner: c.Owner, Namespace: c.Live.Namespace, Deployment: c.Live.Name, LegacyManagersDropped: []string{}, RecordsRemoved: []string{}}
	for _, e := range c.Live.ManagedFields {
		if e.Operation == metav1.ManagedFieldsOperationUpdate && slices.Contains(o.Legacy.FieldManagers, e.Manager) && !slices.Contains(p.LegacyManagersDropped, e.Manager) {
			p.LegacyManagersDropped = append(p.LegacyManagersDropped, e.Manager)
		}
	}
	for _, k := range []string{ownership.RecordLabels, ownership.RecordAnnotations, ownership.LegacyHash} {
		if _, ok := c.Live.Annotations[k]; ok {
			p.RecordsRemoved = append(p.RecordsRemoved, k)
		}
	}
	var err error
	if p.Outcome, p.InvalidRecordEntries, err = outcome(c, o.FieldManager, o.Legacy); err != nil {
		return nil, err
	}
	alt := o.Legacy
	alt.Adopt = !alt.Adopt
	if p.Alternative, _, err = outcome(c, o.FieldManager, alt); err != nil {
		return nil, err
	}
	return p, nil
}

func outcome(c Candidate, manager string, legacy ownership.Legacy) (Outcome, []string, error) {
	out := Outcome{Adopt: legacy.Adopt, Keys: []Key{}, TakenOver: []string{}, Pruned: []string{}, Unowned: []string{}, Kept: []string{}}
	m, err := legacy.Plan(c.Live, manager, c.Desired)
	if err != nil {
		return out, nil, err
	}
	live := c.Live.DeepCopy()
	live.APIVersion, live.Kind = "apps/v1", "Deployment"
	migrated, err := patchLocally(live, m.Patch)
	if err != nil {
		return out, nil, err
	}
	typedMigrated := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(migrated.Object, typedMigrated); err != nil {
		return out, nil, err
	}
	desired, err := c.Apply(typedMigrated)
	if err != nil {
		return out, nil, err
	}
	after, err := applyLocally(migrated, desired, manager)
	if err != nil {
		return out, nil, err
	}
	beforeIdx, err := managed.NewIndex(c.Live.ManagedFields)
	if err != nil {
		return out, nil, err
	}
	afterIdx, err := managed.NewIndex(after.GetManagedFields())
	if err != nil {
		return out, nil, err
	}
	for _, part := range []struct{ name, field string }{{"label", "labels"}, {"annotation", "annotations"}} {
		before, _, _ := unstructured.NestedStringMap(migrated.Object, "spec", "template", "metadata", part.field)
		now, _, _ := unstructured.NestedStringMap(after.Object, "spec", "template", "metadata", part.field)
		keys := slices.Sorted(maps.Keys(before))
		for k := range now {
			if _, ok := before[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			path := templatePath(part.field, k)
			key := Key{Part: part.name, Key: k, Owners: afterIdx.Owners(path)}
			if key.Owners == nil {
				key.Owners = []managed.Owner{}
			}
			id := part.name + ":" + k
			v, had := before[k]
			n, has := now[k]
			if had {
				key.Value = v
			} else {
				key.Value = "<absent>"
			}
			if has {
				key.After = &n
			}
			ours := managed.Owns(key.Owners, manager)
			switch {
			case had && !has:
				key.Action = ActionPrune
				out.Pruned = append(out.Pruned, id)
			case !had:
				key.Action = ActionAdd
			case v != n:
				key.Action = ActionChange
			case ours && managed.Owns(beforeIdx.Owners(path), manager):
				key.Action = ActionOperator
			case ours:
				key.Action = ActionTakeOver
				out.TakenOver = append(out.TakenOver, id)
			case len(key.Owners) > 0:
				key.Action = ActionKeep
			case len(beforeIdx.Owners(path)) > 0:
				key.Action = ActionRelease
			default:
				key.Action = ActionUnowned
			}
			if has {
				out.Kept = append(out.Kept, id)
				if len(key.Owners) == 0 {
					out.Unowned = append(out.Unowned, id)
				}
			}
			out.Keys = append(out.Keys, key)
		}
	}
	beforeTemplate, _, _ := unstructured.NestedMap(migrated.Object, "spec", "template")
	afterTemplate, _, _ := unstructured.NestedMap(after.Object, "spec", "template")
	out.Rolls = !equality.Semantic.DeepEqual(beforeTemplate, afterTemplate)
	return out, m.Invalid, nil
}
