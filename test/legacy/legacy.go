/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package legacy acts as the records-based operator before this one, for the integration suite
// and the benchmark's upgrade scenario: read-modify-Update under the field manager "manager", with
// the record annotations that list the user keys it set.
package legacy

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
)

// FieldManager is the field manager of the records-based operator's Updates (kubebuilder's default).
const FieldManager = "manager"

// WriteDeployment is one reconcile of the records-based operator for the Deployment ns/name: it
// builds the Deployment from ac (the current operator's apply configuration, so both operators
// want the same workload), creates it with field owner "manager" or does read-modify-Update of
// the whole object, merging the user's keys into the template maps, deleting the keys its
// previous record listed that the spec no longer has, keeping every other key, and writing the
// records. withRecords=false acts as an operator from before the records existed. A conflict is
// returned as is, for the caller to retry.
func WriteDeployment(ctx context.Context, c client.Client, ns, name string, ac any, userLabels, userAnnotations map[string]string, withRecords bool) (*appsv1.Deployment, error) {
	want := &appsv1.Deployment{}
	if err := convert(ac, want); err != nil {
		return nil, err
	}
	live := &appsv1.Deployment{}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, live)
	if apierrors.IsNotFound(err) {
		live = want.DeepCopy()
		live.Annotations = map[string]string{}
	} else if err != nil {
		return nil, err
	}
	if live.Annotations == nil {
		live.Annotations = map[string]string{}
	}
	prevLabels, _ := ownership.ParseRecord(live.Annotations[ownership.RecordLabels])
	prevAnnotations, _ := ownership.ParseRecord(live.Annotations[ownership.RecordAnnotations])
	MergeKeys(&live.Spec.Template.Labels, want.Spec.Template.Labels, userLabels, prevLabels)
	MergeKeys(&live.Spec.Template.Annotations, want.Spec.Template.Annotations, userAnnotations, prevAnnotations)
	if withRecords {
		live.Annotations[ownership.RecordLabels] = strings.Join(slices.Sorted(maps.Keys(userLabels)), ",")
		live.Annotations[ownership.RecordAnnotations] = strings.Join(slices.Sorted(maps.Keys(userAnnotations)), ",")
		live.Annotations[ownership.LegacyHash] = "0123456789abcdef"
	}
	live.Spec.Replicas = want.Spec.Replicas
	live.Spec.Template.Spec = want.Spec.Template.Spec
	if live.ResourceVersion == "" {
		return live, c.Create(ctx, live, client.FieldOwner(FieldManager))
	}
	return live, c.Update(ctx, live, client.FieldOwner(FieldManager))
}

// CreateService creates the Service the records-based operator wrote, from ac (the current
// operator's apply configuration), with field owner "manager": its Update entry then co-owns every
// field of it.
func CreateService(ctx context.Context, c client.Client, ac any) (*corev1.Service, error) {
	svc := &corev1.Service{}
	if err := convert(ac, svc); err != nil {
		return nil, err
	}
	return svc, c.Create(ctx, svc, client.FieldOwner(FieldManager))
}

// MergeKeys is the legacy operator's map merge: operator keys, then user keys, minus the keys
// the previous record listed that the user no longer sets; every other key stays.
func MergeKeys(live *map[string]string, operator, user map[string]string, previous []string) {
	if *live == nil {
		*live = map[string]string{}
	}
	for _, k := range previous {
		if _, ok := user[k]; !ok {
			delete(*live, k)
		}
	}
	maps.Copy(*live, operator)
	maps.Copy(*live, user)
}

// convert turns an apply configuration into the typed object it describes.
func convert(ac any, out any) error {
	data, err := json.Marshal(ac)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
