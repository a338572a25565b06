/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"maps"
	"strings"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/test/legacy"
)

// legacyReconcile behaves like the records-based operator before this one: it builds the same
// Deployment, creates it with field owner "manager", and afterwards does read-modify-Update of the
// whole object, merging the user's keys into the template maps, deleting the keys its previous
// record listed that the spec no longer has, keeping every other key, and writing the records.
// withRecords=false acts as an operator from before the records existed.
func legacyReconcile(ns, name string, withRecords bool) *appsv1.Deployment {
	isvc := &inferencev1alpha1.InferenceService{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, isvc)).To(Succeed())
	userLabels := map[string]string{}
	for k, v := range isvc.Spec.PodLabels {
		userLabels[k] = string(v)
	}
	userAnnotations := maps.Clone(isvc.Spec.PodAnnotations)

	ac, err := inferenceservice.Deployment(isvc, inferenceservice.Inputs{Replicas: isvc.Spec.Replicas})
	Expect(err).NotTo(HaveOccurred())
	return legacyReconcileDeployment(ns, name, ac, userLabels, userAnnotations, withRecords)
}

// legacyReconcileRouter is legacyReconcile for a ModelRouter's proxy Deployment.
func legacyReconcileRouter(ns, name string) *appsv1.Deployment {
	router := &inferencev1alpha1.ModelRouter{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, router)).To(Succeed())
	userLabels := map[string]string{}
	for k, v := range router.Spec.Proxy.PodLabels {
		userLabels[k] = string(v)
	}
	ac := modelrouter.Deployment(router, modelrouter.Inputs{})
	return legacyReconcileDeployment(ns, modelrouter.Name(router), ac, userLabels, maps.Clone(router.Spec.Proxy.PodAnnotations), true)
}

func legacyReconcileDeployment(ns, name string, ac any, userLabels, userAnnotations map[string]string, withRecords bool) *appsv1.Deployment {
	var out *appsv1.Deployment
	Eventually(func() (err error) {
		out, err = legacy.WriteDeployment(suiteCtx, k8sClient, ns, name, ac, userLabels, userAnnotations, withRecords)
		return err
	}).Should(Succeed())
	return out
}

// legacyOwnsTemplateKeys lists the pod-template label and annotation keys the legacy manager's
// Update entry owns.
func legacyOwnsTemplateKeys(d *appsv1.Deployment) []string {
	var keys []string
	for _, e := range d.ManagedFields {
		if e.Manager != "manager" {
			continue
		}
		var f map[string]any
		Expect(json.Unmarshal(e.FieldsV1.Raw, &f)).To(Succeed())
		meta, _ := dig(f, "f:spec", "f:template", "f:metadata").(map[string]any)
		for _, group := range []string{"f:labels", "f:annotations"} {
			m, _ := meta[group].(map[string]any)
			for k := range m {
				keys = append(keys, strings.TrimPrefix(k, "f:"))
			}
		}
	}
	return keys
}

func dig(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}
