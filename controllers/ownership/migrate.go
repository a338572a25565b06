/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

// This file is the one-time migration from the records-based operator. It can be deleted once no
// cluster runs an object written by an operator older than the server-side apply one, i.e. when
// every Deployment, Service, ConfigMap and HPA has been reconciled once by this operator (the
// migration removes the traces it looks for, so `kubectl get deploy -A -o yaml | grep
// applied-pod-` finding nothing, and no object of the operator with a `manager` Update entry, says
// it is done).

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// The legacy operator's traces on a Deployment's own metadata.
const (
	RecordLabels      = "inference.llmkube.dev/applied-pod-labels"
	RecordAnnotations = "inference.llmkube.dev/applied-pod-annotations"
	LegacyHash        = "llmkube.ai/desired-template-hash"
)

var legacyAnnotations = []string{RecordLabels, RecordAnnotations, LegacyHash}

// DefaultLegacyFieldManagers are the managers the records-based operator wrote with: kubebuilder's
// default binary name.
var DefaultLegacyFieldManagers = []string{"manager"}

// Legacy says how to recognise the records-based operator's writes.
type Legacy struct {
	// FieldManagers whose Update entries are the legacy operator's; empty means none (only the
	// record annotations are then taken over and removed).
	FieldManagers []string
	// Adopt takes over pod-template keys that a legacy Update entry owns but no record lists.
	Adopt bool
}

// NeedsMigration says whether obj, one of the objects manager applies (Deployment, Service,
// ConfigMap, HPA), still carries the legacy operator's ownership. It reads only obj, so objects
// without traces cost no request.
//
// The rule that tells the legacy operator from a newcomer that happens to be called like it
// (`manager` is the default field manager of every kubebuilder scaffold):
//
//	record or hash   legacy Update   manager's own   outcome
//	annotation       entry           Apply entry
//	yes              any             any             migrate: only the legacy operator writes these
//	                                                 annotations, so a rolling upgrade's old pod
//	                                                 that writes a Deployment again is caught
//	no               yes             no              migrate: the first apply to an object the
//	                                                 legacy operator wrote (every Service, ConfigMap
//	                                                 and HPA; Deployments from before the records)
//	no               yes             yes             leave it: the operator has applied since, so
//	                                                 this is another controller's write; its
//	                                                 ownership stays and no Event is recorded
//	no               no              any             nothing to do
//
// Note: the guard on the operator's own Apply entry is what makes the migration one-time by
// construction, as in Cluster API's managedFields cleanup. The cost: an Update by an old operator
// pod to a Service, ConfigMap or HPA after the new operator applied it (two versions running side
// by side without leader election) is not migrated; with leader election, as the chart installs
// the operator, they never write at once.
func (l Legacy) NeedsMigration(obj metav1.Object, manager string) bool {
	for _, k := range legacyAnnotations {
		if _, ok := obj.GetAnnotations()[k]; ok {
			return true
		}
	}
	return slices.ContainsFunc(obj.GetManagedFields(), l.isLegacy) && !HasApplyEntry(obj, manager)
}

func (l Legacy) isLegacy(e metav1.ManagedFieldsEntry) bool {
	return e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" && slices.Contains(l.FieldManagers, e.Manager)
}

// Migration is the single write that hands the legacy operator's ownership to the field manager.
type Migration struct {
	// Patch is an RFC 6902 JSON patch, guarded by a test of the resourceVersion.
	Patch []byte
	// Labels and Annotations are the pod-template keys taken over from records (and, with Adopt,
	// from the legacy entry).
	Labels, Annotations []string
	// Invalid lists record entries that are not valid keys; they are ignored one by one.
	Invalid []string
}

// neverOwned are paths no managedFields entry lists: the identity fields the API server strips from
// every entry, and the record annotations this write removes.
var neverOwned = notApplied.Union(fieldpath.NewSet(
	fieldpath.MakePathOrDie("metadata", "annotations", RecordLabels),
	fieldpath.MakePathOrDie("metadata", "annotations", RecordAnnotations),
	fieldpath.MakePathOrDie("metadata", "annotations", LegacyHash),
))

// LegacyKinds are the kinds the records-based operator wrote; the migration never touches another.
var LegacyKinds = []string{"Deployment", "Service", "ConfigMap", "HorizontalPodAutoscaler"}

// seedPath is what a migrated entry owns when it would otherwise own nothing.
var seedPath = fieldpath.MakePathOrDie("metadata", "name")

var (
	templateLabels      = fieldpath.MakePathOrDie("spec", "template", "metadata", "labels")
	templateAnnotations = fieldpath.MakePathOrDie("spec", "template", "metadata", "annotations")
	builtinTypes        = applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
)

// Plan computes the migration of live, any kind the operator applies (Deployment, Service,
// ConfigMap, HPA), for manager, whose desired apply configuration is desired. It is pure: no
// request, no clock but the new entry's time, so a preview (the kubectl plugin) runs the exact
// code the operator runs.
//
// The new managedFields: manager's Apply entry owns what it owned, plus every field desired sets
// and every recorded key that exists on live and, on a Deployment, every container, init
// container and volume the legacy entry created that desired does not have (takeUnplannedItems:
// the next apply removes them, such as LLMKube's llama-server container beside model-server);
// legacy Update entries are dropped, which releases (never deletes) what else only they owned;
// every other manager's entry stays exactly as it was.
// The record and hash annotations are removed in the same write, and the pod template is not
// touched, so the write rolls no pod.
//
// Note: the legacy Update entry co-owns every field the old operator ever set, so without this an
// apply could never remove a key again (kubernetes/kubernetes#99003).
func (l Legacy) Plan(live client.Object, manager string, desired runtime.ApplyConfiguration) (*Migration, error) {
	m := &Migration{}
	desiredU, err := ToUnstructured(desired)
	if err != nil {
		return nil, fmt.Errorf("reading the desired object's fields: %w", err)
	}
	gvk := desiredU.GroupVersionKind()
	desiredSet, err := unstructuredFieldSet(desiredU.Object, gvk)
	if err != nil {
		return nil, fmt.Errorf("reading the desired %s's fields: %w", gvk.Kind, err)
	}
	liveU, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return nil, err
	}
	liveSet, err := unstructuredFieldSet(liveU, gvk)
	if err != nil {
		return nil, fmt.Errorf("reading the live %s's fields: %w", gvk.Kind, err)
	}
	annotations := live.GetAnnotations()

	take := desiredSet.Intersection(liveSet)
	var invalid []string
	m.Labels, invalid = takeRecorded(take, liveSet, annotations[RecordLabels], templateLabels)
	m.Invalid = append(m.Invalid, invalid...)
	m.Annotations, invalid = takeRecorded(take, liveSet, annotations[RecordAnnotations], templateAnnotations)
	m.Invalid = append(m.Invalid, invalid...)

	var entries []metav1.ManagedFieldsEntry
	ours := -1
	for _, e := range live.GetManagedFields() {
		if l.isLegacy(e) {
			legacy, err := EntrySet(e)
			if err != nil {
				return nil, err
			}
			if gvk.Kind == "Deployment" {
				takeUnplannedItems(take, legacy.Intersection(liveSet), desiredSet)
			}
			if l.Adopt {
				m.Labels = adoptChildren(take, legacy, liveSet, templateLabels, m.Labels)
				m.Annotations = adoptChildren(take, legacy, liveSet, templateAnnotations, m.Annotations)
			}
			continue
		}
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			owned, err := EntrySet(e)
			if err != nil {
				return nil, err
			}
			take = take.Union(owned)
			ours = len(entries)
		}
		entries = append(entries, e)
	}
	// The record annotations go away in this write; nobody may own them afterwards.
	take = take.Difference(neverOwned)
	if take.Empty() {
		// The API server drops an entry that owns nothing, and the next apply would then meet a
		// "before-first-apply" Update entry co-owning every field. Seed it as Cluster API does.
		take.Insert(seedPath)
	}
	raw, err := take.ToJSON()
	if err != nil {
		return nil, err
	}
	apply := metav1.ManagedFieldsEntry{
		Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: gvk.GroupVersion().String(),
		Time: &metav1.Time{Time: time.Now().UTC().Truncate(time.Second)}, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: raw},
	}
	if ours >= 0 {
		entries[ours] = apply
	} else {
		entries = append(entries, apply)
	}

	ops := []map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()},
		{"op": "replace", "path": "/metadata/managedFields", "value": entries},
	}
	for _, k := range legacyAnnotations {
		if _, ok := annotations[k]; ok {
			ops = append(ops, map[string]any{"op": "remove", "path": "/metadata/annotations/" + escapePointer(k)})
		}
	}
	if m.Patch, err = json.Marshal(ops); err != nil {
		return nil, err
	}
	return m, nil
}

// ParseRecord splits a record annotation (a sorted, comma-separated key list) into valid keys
// and entries that are not keys.
func ParseRecord(record string) (keys, invalid []string) {
	for _, k := range strings.Split(record, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if len(validation.IsQualifiedName(k)) > 0 {
			invalid = append(invalid, k)
			continue
		}
		keys = append(keys, k)
	}
	return keys, invalid
}

// takeRecorded adds the recorded keys under parent that exist on live to take.
func takeRecorded(take, liveSet *fieldpath.Set, record string, parent fieldpath.Path) (taken, invalid []string) {
	keys, invalid := ParseRecord(record)
	for _, k := range keys {
		p := append(parent.Copy(), fieldpath.PathElement{FieldName: &k})
		if liveSet.Has(p) {
			take.Insert(p)
			taken = append(taken, k)
		}
	}
	return taken, invalid
}

// podItemLists are the lists of a Deployment's pod spec whose items the legacy operator derived:
// a container, init container or volume it created and the operator's plan does not have is taken
// whole, so the first apply removes it.
var podItemLists = []fieldpath.Path{
	fieldpath.MakePathOrDie("spec", "template", "spec", "containers"),
	fieldpath.MakePathOrDie("spec", "template", "spec", "initContainers"),
	fieldpath.MakePathOrDie("spec", "template", "spec", "volumes"),
}

// takeUnplannedItems adds to take every path of legacy inside an item of podItemLists that
// desired does not have (LLMKube's llama-server container, its init containers and their volumes,
// which would otherwise run beside model-server on one port, with their GPUs added to its own).
//
// Note: only whole items are taken. A field the legacy entry owns inside an item the plan has too
// is often one the API server defaulted when the old operator created the object (imagePullPolicy,
// terminationMessagePath): taking it would make the apply drop it and the API server default it
// again, so it stays released, as before.
func takeUnplannedItems(take, legacy, desired *fieldpath.Set) {
	itemOf := func(p fieldpath.Path) fieldpath.Path {
		for _, l := range podItemLists {
			if len(p) > len(l) && p[:len(l)].Equals(l) {
				return p[:len(l)+1]
			}
		}
		return nil
	}
	planned := fieldpath.NewSet()
	desired.Iterate(func(p fieldpath.Path) {
		if item := itemOf(p); item != nil {
			planned.Insert(item.Copy())
		}
	})
	legacy.Iterate(func(p fieldpath.Path) {
		if item := itemOf(p); item != nil && !planned.Has(item) {
			take.Insert(p.Copy())
		}
	})
}

// adoptChildren takes every key under parent that the legacy entry owns and live still has.
func adoptChildren(take, legacy, liveSet *fieldpath.Set, parent fieldpath.Path, taken []string) []string {
	legacy.Intersection(liveSet).Iterate(func(p fieldpath.Path) {
		if len(p) != len(parent)+1 || !p[:len(parent)].Equals(parent) || p[len(parent)].FieldName == nil {
			return
		}
		take.Insert(p.Copy())
		if k := *p[len(parent)].FieldName; !slices.Contains(taken, k) {
			taken = append(taken, k)
		}
	})
	slices.Sort(taken)
	return taken
}

// unstructuredFieldSet is every field path of u, typed as gvk (a typed object read by the client
// often carries no apiVersion and kind).
func unstructuredFieldSet(u map[string]any, gvk schema.GroupVersionKind) (*fieldpath.Set, error) {
	obj := &unstructured.Unstructured{Object: u}
	obj.SetGroupVersionKind(gvk)
	tv, err := builtinTypes.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	return tv.ToFieldSet()
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
