/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package migration previews the operator's one-time migration from the records-based operator:
// for one object with legacy ownership (a Deployment, Service, ConfigMap or HPA), what the
// migration write takes over and drops, and what the first apply after it prunes, keeps and leaves
// unowned. It runs the operator's own planning code (controllers/ownership) on the desired state
// the reconcilers' builders produce, then the API server's field manager on the result, and
// writes nothing.
package migration

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/plugin/owners"
)

// Actions on one key or field.
const (
	// ActionTakeOver: the operator's apply owns it from now on (from a record, from the desired
	// state, or adopted) and keeps it.
	ActionTakeOver = "take over"
	// ActionPrune: the first apply deletes it (for a pod-template key: the pods roll).
	ActionPrune = "prune"
	// ActionKeep: another manager owns it; the operator leaves it alone.
	ActionKeep = "keep"
	// ActionRelease: only the legacy operator owned it; afterwards nobody does, so it stays for
	// good unless someone deletes it.
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

// Parts of a row: a pod-template label or annotation, or any other field (by its path).
const (
	PartLabel      = "label"
	PartAnnotation = "annotation"
	PartField      = "field"
)

// Options are the operator's flags that decide the migration.
type Options struct {
	FieldManager string
	Legacy       ownership.Legacy
}

// Candidate is one object the operator applies, with what it would apply.
type Candidate struct {
	// Owner names the InferenceService or ModelRouter: isvc/NAME or mr/NAME.
	Owner string
	// Live is the object as read (typed or unstructured).
	Live client.Object
	// Desired is what the reconciler hands the migration.
	Desired runtime.ApplyConfiguration
	// Apply is what the reconciler applies once migrated is the live object.
	Apply func(migrated *unstructured.Unstructured) (runtime.ApplyConfiguration, error)
}

// Key is what happens to one pod-template key, or to one other field the migration releases or
// the first apply prunes.
type Key struct {
	Part  string `json:"part"`
	Key   string `json:"key"`
	Value string `json:"value"`
	// After is the value after the first apply, absent when pruned.
	After  *string `json:"after,omitempty"`
	Action string  `json:"action"`
	// Owners after the first apply.
	Owners []owners.Owner `json:"owners"`
}

// Outcome is the state after the migration write and the first apply.
type Outcome struct {
	Adopt bool  `json:"adoptLegacyOwnership"`
	Keys  []Key `json:"keys"`
	// Rolls says whether the first apply changes a Deployment's pod template.
	Rolls bool `json:"rolls"`
	// TakenOver, Pruned, Unowned and Kept list "label:KEY", "annotation:KEY" and "field:PATH".
	// Unowned are the pod-template keys nobody owns afterwards, and the other fields the
	// migration releases; Kept are the pod-template keys that stay.
	TakenOver []string `json:"takenOver"`
	Pruned    []string `json:"pruned"`
	Unowned   []string `json:"unowned"`
	Kept      []string `json:"kept"`
}

// Plan is the preview of one object's migration.
type Plan struct {
	Owner     string `json:"owner"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
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

// For previews c's migration; nil when c.Live needs none (ownership.Legacy.NeedsMigration).
func For(c Candidate, o Options) (*Plan, error) {
	if !o.Legacy.NeedsMigration(c.Live, o.FieldManager) {
		return nil, nil
	}
	desired, err := ownership.ToUnstructured(c.Desired)
	if err != nil {
		return nil, err
	}
	p := &Plan{Owner: c.Owner, Kind: desired.GetKind(), Namespace: c.Live.GetNamespace(), Name: c.Live.GetName(),
		LegacyManagersDropped: []string{}, RecordsRemoved: []string{}}
	for _, e := range c.Live.GetManagedFields() {
		if e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" && slices.Contains(o.Legacy.FieldManagers, e.Manager) &&
			!slices.Contains(p.LegacyManagersDropped, e.Manager) {
			p.LegacyManagersDropped = append(p.LegacyManagersDropped, e.Manager)
		}
	}
	for _, k := range []string{ownership.RecordLabels, ownership.RecordAnnotations, ownership.LegacyHash} {
		if _, ok := c.Live.GetAnnotations()[k]; ok {
			p.RecordsRemoved = append(p.RecordsRemoved, k)
		}
	}
	if p.Outcome, p.InvalidRecordEntries, err = outcome(c, desired.GetAPIVersion(), p.Kind, o.FieldManager, o.Legacy); err != nil {
		return nil, err
	}
	alt := o.Legacy
	alt.Adopt = !alt.Adopt
	if p.Alternative, _, err = outcome(c, desired.GetAPIVersion(), p.Kind, o.FieldManager, alt); err != nil {
		return nil, err
	}
	return p, nil
}

func outcome(c Candidate, apiVersion, kind, manager string, legacy ownership.Legacy) (Outcome, []string, error) {
	out := Outcome{Adopt: legacy.Adopt, Keys: []Key{}, TakenOver: []string{}, Pruned: []string{}, Unowned: []string{}, Kept: []string{}}
	m, err := legacy.Plan(c.Live, manager, c.Desired)
	if err != nil {
		return out, nil, err
	}
	live, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.Live)
	if err != nil {
		return out, nil, err
	}
	liveU := &unstructured.Unstructured{Object: live}
	liveU.SetAPIVersion(apiVersion)
	liveU.SetKind(kind)
	migrated, err := patchLocally(liveU, m.Patch)
	if err != nil {
		return out, nil, err
	}
	desired, err := c.Apply(migrated)
	if err != nil {
		return out, nil, err
	}
	after, err := applyLocally(migrated, desired, manager)
	if err != nil {
		return out, nil, err
	}
	beforeIdx, err := owners.NewIndex(c.Live.GetManagedFields())
	if err != nil {
		return out, nil, err
	}
	afterIdx, err := owners.NewIndex(after.GetManagedFields())
	if err != nil {
		return out, nil, err
	}
	if kind == "Deployment" {
		templateKeys(&out, migrated, after, beforeIdx, afterIdx, manager)
		beforeTemplate, _, _ := unstructured.NestedMap(migrated.Object, "spec", "template")
		afterTemplate, _, _ := unstructured.NestedMap(after.Object, "spec", "template")
		out.Rolls = !equality.Semantic.DeepEqual(beforeTemplate, afterTemplate)
	}
	if err := otherFields(&out, migrated, after, beforeIdx, afterIdx); err != nil {
		return out, nil, err
	}
	return out, m.Invalid, nil
}

// templateKeys adds a row for every pod-template label and annotation before or after the apply.
func templateKeys(out *Outcome, migrated, after *unstructured.Unstructured, beforeIdx, afterIdx *owners.Index, manager string) {
	for _, part := range []struct{ name, field string }{{PartLabel, "labels"}, {PartAnnotation, "annotations"}} {
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
				key.Owners = []owners.Owner{}
			}
			id := part.name + ":" + k
			v, had := before[k]
			n, has := now[k]
			key.Value = "<absent>"
			if had {
				key.Value = v
			}
			if has {
				key.After = &n
			}
			switch {
			case had && !has:
				key.Action = ActionPrune
				out.Pruned = append(out.Pruned, id)
			case !had:
				key.Action = ActionAdd
			case v != n:
				key.Action = ActionChange
			case owners.Owns(key.Owners, manager) && owners.Owns(beforeIdx.Owners(path), manager):
				key.Action = ActionOperator
			case owners.Owns(key.Owners, manager):
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
}
