/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"time"

	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// ModelsRun is the operator process converging N Model and InferenceService pairs, the shape an
// outside review restarted the operator over, and then restarted over them.
type ModelsRun struct {
	N        int    `json:"n"`
	Converge *Phase `json:"converge"`
	// StatusWritesPerModel is the Model status writes of the convergence, per Model.
	StatusWritesPerModel float64 `json:"statusWritesPerModel"`
	Restart              *Phase  `json:"restart"`
}

// modelOf is the i-th Model of a pair: a gguf file of a repository.
func modelOf(ns string, i int) *inferencev1alpha1.Model {
	return &inferencev1alpha1.Model{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("model-%04d", i), Namespace: ns},
		Spec: inferencev1alpha1.ModelKindSpec{
			Source:       fmt.Sprintf("hf://org/repo-%04d/model.Q4_K_M.gguf", i),
			Format:       inferencev1alpha1.ModelFormatGGUF,
			Quantization: "Q4_K_M",
		},
	}
}

// pairOf is the i-th InferenceService of a pair: it names its Model, llama.cpp, one replica, CPU
// and memory, and a pod label.
func pairOf(ns string, i int) *inferencev1alpha1.InferenceService {
	return &inferencev1alpha1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("model-%04d", i), Namespace: ns},
		Spec: inferencev1alpha1.InferenceServiceSpec{
			ModelRef:  fmt.Sprintf("model-%04d", i),
			Runtime:   inferencev1alpha1.RuntimeLlamaCPP,
			Replicas:  ptr.To[int32](1),
			Resources: &inferencev1alpha1.ResourceSpec{CPU: ptr.To(apiresource.MustParse("1")), Memory: ptr.To(apiresource.MustParse("2Gi"))},
			PodLabels: map[string]inferencev1alpha1.LabelValue{keepKey: "yes"},
		},
	}
}

// modelsRun converges n pairs with the operator binary and restarts it over them.
func (b *bench) modelsRun(ctx context.Context, n int, s Settings) (*ModelsRun, error) {
	ns := fmt.Sprintf("models-%d-%d", n, b.processRuns.Add(1))
	if err := b.namespace(ctx, ns); err != nil {
		return nil, err
	}
	defer func() { _ = b.deleteServices(ctx, ns) }()
	p, err := b.startProcess(ctx, ns, s, b.o.CacheTransform)
	if err != nil {
		return nil, err
	}
	defer func() { p.stop() }()
	b.logf("N=%d operator process: create %d Model and InferenceService pairs and wait for convergence", n, n)
	w, err := b.openWindow(ctx, p, "model")
	if err != nil {
		return nil, err
	}
	if err := parallel(n, b.o.Workers, func(i int) error {
		if err := b.user.Create(ctx, modelOf(ns, i)); err != nil {
			return err
		}
		return b.user.Create(ctx, pairOf(ns, i))
	}); err != nil {
		return nil, err
	}
	if err := b.waitConverged(ctx, ns, n, 20*time.Minute); err != nil {
		return nil, err
	}
	run := &ModelsRun{N: n}
	if run.Converge, err = w.close(ctx, p, n, map[string]int{"POST models": n, "POST inferenceservices": n}); err != nil {
		return nil, err
	}
	run.StatusWritesPerModel = float64(run.Converge.Requests["APPLY models/status"]+run.Converge.Requests["PATCH models/status"]) / float64(n)
	b.logf("N=%d pairs converged: %.2f Model status writes per Model, requests %v", n, run.StatusWritesPerModel, run.Converge.Requests)

	p.stop()
	if w, err = b.openWindow(ctx, nil, "model"); err != nil {
		return nil, err
	}
	if p, err = b.startProcess(ctx, ns, s, b.o.CacheTransform); err != nil {
		return nil, err
	}
	if run.Restart, err = w.close(ctx, p, n, nil); err != nil {
		return nil, err
	}
	b.logf("N=%d pairs restart: %d Model reconciles in %s, requests %v", n, run.Restart.Reconciles, run.Restart.Took, run.Restart.Requests)
	return run, nil
}
