/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package owners explains who owns what on the objects the operator applies: one row per
// pod-template label and annotation (or per applied field), with where it comes from and what is
// wrong with it.
package owners

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/llmkube/operator/controllers/ownership"
)

// Sources of a key.
const (
	// SourceSpec: the operator applies it because the spec (podLabels, podAnnotations) asks.
	SourceSpec = "spec"
	// SourceOperator: the operator applies it on its own (selector, runtime, hints).
	SourceOperator = "operator"
	// SourceOther: another manager owns it; the operator never touches it.
	SourceOther = "other"
	// SourceUnowned: nobody owns it, so no apply will ever remove it.
	SourceUnowned = "unowned"
)

// Flags of a row.
const (
	// FlagConflict: the spec (or the operator) wants a value another manager changed and owns.
	FlagConflict = "conflict"
	// FlagLegacy: the records-based operator's record or Update entry still covers the key.
	FlagLegacy = "legacy"
	// FlagUnowned: nobody owns the key.
	FlagUnowned = "unowned"
	// FlagPending: the operator wants the key and the Deployment does not have it yet.
	FlagPending = "pending"
)

// Row is one key or field.
type Row struct {
	// Part is "label", "annotation", or, with every field, the object's kind.
	Part  string `json:"part"`
	Key   string `json:"key"`
	Value string `json:"value"`
	// Want is the value the operator applies, when it applies the key.
	Want   *string  `json:"want,omitempty"`
	Source string   `json:"source"`
	Owners []Owner  `json:"owners"`
	Flags  []string `json:"flags,omitempty"`
	// Note says what a flag means for this row.
	Note string `json:"note,omitempty"`
}

// PodMetadata is what the rows of a generated Deployment's pod template are computed from.
type PodMetadata struct {
	// Live is the Deployment as the API server has it.
	Live *appsv1.Deployment
	// Desired is what the operator applies now; nil when it applies nothing (its Model is missing).
	Desired *appsv1ac.DeploymentApplyConfiguration
	// SpecLabels and SpecAnnotations are the spec's podLabels and podAnnotations.
	SpecLabels, SpecAnnotations map[string]string
	FieldManager                string
	Legacy                      ownership.Legacy
}

var (
	templateLabels      = fieldpath.MakePathOrDie("spec", "template", "metadata", "labels")
	templateAnnotations = fieldpath.MakePathOrDie("spec", "template", "metadata", "annotations")
)

// Rows lists every key of the live pod template, and every key the operator wants that is not
// there yet, labels first, each part sorted by key.
func (pm PodMetadata) Rows() ([]Row, error) {
	idx, err := NewIndex(pm.Live.ManagedFields)
	if err != nil {
		return nil, err
	}
	var wantLabels, wantAnnotations map[string]string
	if pm.Desired == nil {
		pm.Desired = &appsv1ac.DeploymentApplyConfiguration{} // the operator leaves the Deployment as it is
	}
	if t := pm.Desired.Spec; t != nil && t.Template != nil {
		wantLabels, wantAnnotations = t.Template.Labels, t.Template.Annotations
	}
	recordedLabels, _ := ownership.ParseRecord(pm.Live.Annotations[ownership.RecordLabels])
	recordedAnnotations, _ := ownership.ParseRecord(pm.Live.Annotations[ownership.RecordAnnotations])
	legacy := pm.Legacy.NeedsMigration(pm.Live, pm.FieldManager)

	rows := pm.part("label", idx, templateLabels, pm.Live.Spec.Template.Labels, wantLabels, pm.SpecLabels, legacy, recordedLabels)
	rows = append(rows, pm.part("annotation", idx, templateAnnotations, pm.Live.Spec.Template.Annotations, wantAnnotations, pm.SpecAnnotations, legacy, recordedAnnotations)...)
	return rows, nil
}

func (pm PodMetadata) part(part string, idx *Index, parent fieldpath.Path, live, want, spec map[string]string, legacy bool, recorded []string) []Row {
	keys := slices.Sorted(maps.Keys(live))
	for k := range want {
		if _, ok := live[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		key := k
		owners := idx.Owners(append(parent.Copy(), fieldpath.PathElement{FieldName: &key}))
		if owners == nil {
			owners = []Owner{}
		}
		r := Row{Part: part, Key: k, Owners: owners}
		value, present := live[k]
		w, wanted := want[k]
		if wanted {
			r.Want = &w
		}
		fromSpec := false
		if s, ok := spec[k]; ok && wanted && s == w {
			fromSpec = true
		}
		others := Others(owners, pm.FieldManager)
		isLegacy := func(o Owner) bool {
			return o.Operation == "Update" && slices.Contains(pm.Legacy.FieldManagers, o.Manager)
		}
		// Before the migration the records-based operator's entry stands for the operator: a key
		// only it owns comes from where the operator's apply would take it from.
		onlyLegacy := legacy && len(owners) > 0 && !slices.ContainsFunc(owners, func(o Owner) bool { return !isLegacy(o) })
		switch {
		case !present:
			r.Value = "<absent>"
			r.Source = SourceOperator
			if fromSpec {
				r.Source = SourceSpec
			}
			r.Flags = append(r.Flags, FlagPending)
			r.Note = "the next apply adds it"
		case (Owns(owners, pm.FieldManager) || onlyLegacy) && fromSpec:
			r.Value, r.Source = value, SourceSpec
		case Owns(owners, pm.FieldManager) || onlyLegacy && wanted:
			r.Value, r.Source = value, SourceOperator
		case len(owners) > 0:
			r.Value, r.Source = value, SourceOther
		default:
			r.Value, r.Source = value, SourceUnowned
		}
		if present && wanted && value != w && slices.ContainsFunc(others, func(o Owner) bool { return !isLegacy(o) }) {
			r.Flags = append(r.Flags, FlagConflict)
			r.Note = "wants " + w + "; " + Managers(others) + " set " + value + " (the operator forces it back when it next applies the pod template)"
		}
		if legacy && (slices.Contains(recorded, k) || slices.ContainsFunc(owners, isLegacy)) {
			r.Flags = append(r.Flags, FlagLegacy)
			if r.Note == "" {
				r.Note = "see migration plan"
			}
		}
		if present && len(owners) == 0 {
			r.Flags = append(r.Flags, FlagUnowned)
			if r.Note == "" {
				r.Note = "nobody owns it: no apply will ever remove it; delete it by hand when unwanted"
			}
		}
		rows = append(rows, r)
	}
	return rows
}
