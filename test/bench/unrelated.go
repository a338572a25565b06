/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/llmkube/operator/controllers"
)

// Unrelated is the operator process's RSS in a namespace full of objects that are not its own,
// beside its RSS without them: the caches hold only the operator's labelled objects, so the two
// must stay close however many unrelated objects there are.
type Unrelated struct {
	N           int     `json:"n"`
	Deployments int     `json:"deployments"`
	ConfigMaps  int     `json:"configMaps"`
	Without     Child   `json:"without"`
	With        Child   `json:"with"`
	Ratio       float64 `json:"ratio"`
	// PerOwned is RSS (with) per InferenceService, each owning a Deployment and a Service.
	PerOwned uint64 `json:"rssPerInferenceService"`
}

// unrelated creates the unrelated objects in ns (where the operator's N InferenceServices
// converged) and measures the operator process with them, beside without is its RSS without.
func (b *bench) unrelated(ctx context.Context, ns string, n int, without Child) (*Unrelated, error) {
	u := &Unrelated{N: n, Deployments: b.o.UnrelatedDeployments, ConfigMaps: b.o.UnrelatedConfigMaps, Without: without}
	b.logf("N=%d unrelated objects: %d Deployments, %d ConfigMaps", n, u.Deployments, u.ConfigMaps)
	err := parallel(u.Deployments, b.o.Workers, func(i int) error {
		labels := map[string]string{"app": fmt.Sprintf("unrelated-%d", i)}
		return b.user.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("unrelated-%d", i), Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1"}}},
				},
			},
		})
	})
	if err != nil {
		return nil, err
	}
	err = parallel(u.ConfigMaps, b.o.Workers, func(i int) error {
		return b.user.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("unrelated-%d", i)},
			Data:       map[string]string{"config.yaml": fmt.Sprintf("replicas: %d\nname: unrelated-%d\n", i%7, i)},
		})
	})
	if err != nil {
		return nil, err
	}
	p, err := b.startProcess(ctx, ns, b.o.settings(), controllers.CacheTransformSafe)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	if _, err := waitQuiet(ctx, p, "inferenceservice", float64(n), 2*time.Second, nil); err != nil {
		return nil, err
	}
	c, err := p.memory(controllers.CacheTransformSafe)
	if err != nil {
		return nil, err
	}
	u.With = *c
	u.Ratio = float64(u.With.RSS) / float64(u.Without.RSS)
	u.PerOwned = u.With.RSS / uint64(n)
	return u, nil
}
