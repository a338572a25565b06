/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package podmeta decides which labels and annotations a pod template gets from the operator and
// from the user, with one precedence rule for both kinds: operator labels win (they carry the
// selector), user annotations win (they are the user's way to override a hint).
//
// It keeps no record of what it applied: ownership lives in the API server's managedFields, and a
// key that leaves the result of these functions leaves the pods by itself on the next apply.
package podmeta

import (
	"maps"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// Labels merges the operator's labels over the user's. It returns nil, never an empty map, so an
// apply configuration built from it claims nothing when there is nothing to say.
func Labels(operator map[string]string, user map[string]inferencev1alpha1.LabelValue) map[string]string {
	out := make(map[string]string, len(operator)+len(user))
	for k, v := range user {
		out[k] = string(v)
	}
	maps.Copy(out, operator)
	return nilIfEmpty(out)
}

// Annotations merges the user's annotations over the operator's.
func Annotations(operator, user map[string]string) map[string]string {
	out := make(map[string]string, len(operator)+len(user))
	maps.Copy(out, operator)
	maps.Copy(out, user)
	return nilIfEmpty(out)
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// AnnotationsPinned is Annotations with keys the user cannot override: pinned wins over both the
// operator's hints and the user's annotations (a checksum that rolls pods must not be spoofable).
func AnnotationsPinned(operator, pinned, user map[string]string) map[string]string {
	out := make(map[string]string, len(operator)+len(user)+len(pinned))
	maps.Copy(out, operator)
	maps.Copy(out, user)
	maps.Copy(out, pinned)
	return nilIfEmpty(out)
}
