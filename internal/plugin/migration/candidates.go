/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package migration

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/internal/plugin/cluster"
)

// LiveReader reads the live object an apply configuration names (nil when absent).
type LiveReader interface {
	LiveOf(ctx context.Context, ac runtime.ApplyConfiguration) (runtime.Object, string, error)
}

// Candidates are the objects of set that exist, each with what the reconciler hands its
// migration and applies afterwards; live is the Deployment (nil when absent).
func Candidates(ctx context.Context, r LiveReader, set *cluster.Set, live *appsv1.Deployment) ([]Candidate, error) {
	var out []Candidate
	if live != nil && set.Deployment != nil {
		out = append(out, Candidate{Owner: set.Owner, Live: live, Desired: set.Deployment,
			Apply: func(migrated *unstructured.Unstructured) (runtime.ApplyConfiguration, error) {
				d := &appsv1.Deployment{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(migrated.Object, d); err != nil {
					return nil, err
				}
				return set.Apply(d)
			}})
	}
	for _, ac := range set.Others() {
		obj, _, err := r.LiveOf(ctx, ac)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			continue
		}
		ac := ac
		out = append(out, Candidate{Owner: set.Owner, Live: obj.(client.Object), Desired: ac,
			Apply: func(*unstructured.Unstructured) (runtime.ApplyConfiguration, error) { return ac, nil }})
	}
	return out, nil
}
