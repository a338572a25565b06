/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// SpecOrMetadataChanged lets through every event of an owner (InferenceService, ModelRouter) but an
// update of its status alone: the operator's own status write would otherwise make it reconcile
// once more, and a rejected apply would be sent again for nothing.
var SpecOrMetadataChanged = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
	predicate.AnnotationChangedPredicate{}, deletionChanged)

// deletionChanged lets an update through when the deletion timestamp or the finalizers change.
var deletionChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return !e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp()) ||
		!slices.Equal(e.ObjectOld.GetFinalizers(), e.ObjectNew.GetFinalizers())
}}
