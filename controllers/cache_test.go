/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSafeTransformKeepsWhatTheOperatorExtracts(t *testing.T) {
	opts, err := CacheOptions(CacheTransformSafe, []string{"a", "b"})
	if err != nil || len(opts.DefaultNamespaces) != 2 || opts.DefaultTransform == nil {
		t.Fatalf("options %+v, %v", opts, err)
	}
	mf := []metav1.ManagedFieldsEntry{{Manager: "llmkube-operator", Operation: metav1.ManagedFieldsOperationApply}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Annotations:   map[string]string{lastApplied: "{}", "keep": "me"},
		ManagedFields: mf,
	}}
	if _, err := opts.DefaultTransform(dep); err != nil {
		t.Fatal(err)
	}
	if _, ok := dep.Annotations[lastApplied]; ok || dep.Annotations["keep"] != "me" {
		t.Errorf("annotations %v: want only last-applied-configuration dropped", dep.Annotations)
	}
	if len(dep.ManagedFields) != 1 {
		t.Errorf("the managedFields of a kind the operator applies were dropped")
	}
	secret := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: mf}}
	if _, err := opts.DefaultTransform(secret); err != nil {
		t.Fatal(err)
	}
	if secret.ManagedFields != nil {
		t.Errorf("metadata-only objects keep managedFields nothing reads")
	}
	if opts, _ := CacheOptions(CacheTransformNone, nil); opts.DefaultTransform != nil || opts.DefaultNamespaces != nil {
		t.Errorf("none: %+v", opts)
	}
	if _, err := CacheOptions("bogus", nil); err == nil {
		t.Errorf("an unknown transform is accepted")
	}
}
