/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"fmt"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/runtimes"
)

// schedule sets the pod-level fields LLMKube's API has beside nodeSelector and tolerations:
// affinity, topology spread, runtime and priority class, and service links.
func schedule(pod *corev1ac.PodSpecApplyConfiguration, spec *inferencev1alpha1.InferenceServiceSpec, rt runtimes.Runtime) error {
	if spec.Affinity != nil {
		a := &corev1ac.AffinityApplyConfiguration{}
		if err := convert(spec.Affinity, a); err != nil {
			return fmt.Errorf("spec.affinity: %w", err)
		}
		pod.WithAffinity(a)
	}
	for i := range spec.TopologySpreadConstraints {
		c := &corev1ac.TopologySpreadConstraintApplyConfiguration{}
		if err := convert(&spec.TopologySpreadConstraints[i], c); err != nil {
			return fmt.Errorf("spec.topologySpreadConstraints[%d]: %w", i, err)
		}
		pod.WithTopologySpreadConstraints(c)
	}
	if spec.RuntimeClassName != nil {
		pod.WithRuntimeClassName(*spec.RuntimeClassName)
	}
	if spec.PriorityClassName != "" {
		pod.WithPriorityClassName(spec.PriorityClassName)
	}
	if rt.NoServiceLinks {
		pod.WithEnableServiceLinks(false)
	}
	return nil
}
