/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/operator/test/helmtool"
)

// policies are the rendered ValidatingAdmissionPolicy names and their bindings' names.
func policies(objs []*unstructured.Unstructured) (names, bindings []string) {
	for _, o := range objs {
		switch o.GetKind() {
		case "ValidatingAdmissionPolicy":
			names = append(names, o.GetName())
		case "ValidatingAdmissionPolicyBinding":
			bindings = append(bindings, o.GetName())
		}
	}
	slices.Sort(names)
	slices.Sort(bindings)
	return names, bindings
}

// The admission policies are opt-in, one policy and binding per rule, and a rule without its
// parameter is not rendered. The envtest spec of F13 applies them to an API server.
func TestAdmissionPoliciesRender(t *testing.T) {
	if names, bindings := policies(render(t)); len(names)+len(bindings) != 0 {
		t.Errorf("rendered by default: %v %v", names, bindings)
	}
	names, bindings := policies(render(t, "--set", "admissionPolicies.enabled=true"))
	if want := []string{"llmkube-claims", "llmkube-privileged", "llmkube-references", "llmkube-secrets"}; !slices.Equal(names, want) || !slices.Equal(bindings, want) {
		t.Errorf("without registries and a maximum: policies %v, bindings %v, want %v", names, bindings, want)
	}
	objs := render(t, "--set", "admissionPolicies.enabled=true", "--set", "admissionPolicies.allowedRegistries={ghcr.io/llmkube/,registry.example.com/}",
		"--set", "admissionPolicies.maxCacheSize=200Gi", "--set", "admissionPolicies.validationActions={Warn,Audit}",
		"--set", "admissionPolicies.namespaceSelector.matchLabels.team=a",
		"--set", "admissionPolicies.denyExposedEndpoints=true", "--set", "admissionPolicies.denyTolerateAll=true")
	names, _ = policies(objs)
	if want := []string{"llmkube-cache-size", "llmkube-claims", "llmkube-exposed-endpoints", "llmkube-privileged", "llmkube-references", "llmkube-registries", "llmkube-secrets", "llmkube-tolerate-all"}; !slices.Equal(names, want) {
		t.Fatalf("policies %v, want %v", names, want)
	}
	vars, _, _ := unstructured.NestedSlice(helmtool.Find(objs, "ValidatingAdmissionPolicy", "llmkube-registries").Object, "spec", "variables")
	if got := vars[0].(map[string]any)["expression"]; got != `["ghcr.io/llmkube/","registry.example.com/"]` {
		t.Errorf("registries variable = %v", got)
	}
	vars, _, _ = unstructured.NestedSlice(helmtool.Find(objs, "ValidatingAdmissionPolicy", "llmkube-cache-size").Object, "spec", "variables")
	if got := vars[0].(map[string]any)["expression"]; got != `quantity("200Gi")` {
		t.Errorf("maximum variable = %v", got)
	}
	b := helmtool.Find(objs, "ValidatingAdmissionPolicyBinding", "llmkube-secrets")
	actions, _, _ := unstructured.NestedStringSlice(b.Object, "spec", "validationActions")
	team, _, _ := unstructured.NestedString(b.Object, "spec", "matchResources", "namespaceSelector", "matchLabels", "team")
	if strings.Join(actions, ",") != "Warn,Audit" || team != "a" {
		t.Errorf("binding: actions %v, namespace selector team=%q", actions, team)
	}
}

func TestAdmissionPolicyValuesRejected(t *testing.T) {
	for _, set := range []string{"admissionPolicies.maxCacheSize=lots", "admissionPolicies.validationActions={Block}", "admissionPolicies.unknown=1"} {
		if _, err := helmtool.Template(ns, "--set", set); err == nil {
			t.Errorf("--set %s rendered", set)
		}
	}
}
