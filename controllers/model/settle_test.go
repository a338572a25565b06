/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package model

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// TestSettling: only a new Model without status and without users waits, and never past Settle.
func TestSettling(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	model := func(age time.Duration, observed int64) *inferencev1alpha1.Model {
		m := &inferencev1alpha1.Model{}
		m.CreationTimestamp = metav1.NewTime(now.Add(-age))
		m.Status.ObservedGeneration = observed
		return m
	}
	for _, c := range []struct {
		name  string
		m     *inferencev1alpha1.Model
		users int
		want  time.Duration
	}{
		{"new, unused", model(500*time.Millisecond, 0), 0, Settle - 500*time.Millisecond},
		{"new, named", model(0, 0), 1, 0},
		{"new, with a status", model(0, 1), 0, 0},
		{"older than Settle", model(Settle+time.Second, 0), 0, 0},
	} {
		if got := settling(c.m, c.users, now); got != c.want || got > Settle {
			t.Errorf("%s: waits %s, want %s", c.name, got, c.want)
		}
	}
}
