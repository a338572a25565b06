/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/llmkube/operator/test/helmtool"
)

// The default memory limit holds what docs/performance.md measured at 5,000 InferenceServices
// (252-264 MiB RSS, make bench-fair) with the runtime's 10% headroom, and the operator's
// GOMEMLIMIT comes from that limit, unless extraEnv sets one.
// Proves A11.
func TestOperatorMemoryFitsTheMeasuredSize(t *testing.T) {
	d := as[appsv1.Deployment](t, helmtool.Find(render(t), "Deployment", "llmkube"))
	c := d.Spec.Template.Spec.Containers[0]
	limit := c.Resources.Limits[corev1.ResourceMemory]
	measured := resource.MustParse("264Mi")
	if limit.Value()/10*9 < measured.Value() {
		t.Errorf("memory limit %s: 90%% of it is below the 264 MiB measured at 5,000 InferenceServices", limit.String())
	}
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
	if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.ResourceFieldRef == nil ||
		c.Env[i].ValueFrom.ResourceFieldRef.Resource != "limits.memory" || c.Env[i].ValueFrom.ResourceFieldRef.ContainerName != c.Name {
		t.Fatalf("GOMEMLIMIT is not set from the container's memory limit: %+v", c.Env)
	}
	own := as[appsv1.Deployment](t, helmtool.Find(render(t, "--set", "extraEnv[0].name=GOMEMLIMIT", "--set", "extraEnv[0].value=200MiB"), "Deployment", "llmkube"))
	n := 0
	for _, e := range own.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GOMEMLIMIT" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d GOMEMLIMIT entries with one in extraEnv, want the user's alone", n)
	}
}
