package inferenceservice

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// hpaMetric is the HorizontalPodAutoscaler metric of one entry of spec.autoscaling.metrics. An
// entry in LLMKube's short form (name plus targetAverageValue or targetAverageUtilization) means
// what LLMKube's operator made of it: a Pods metric with an average value per pod, or a Resource
// metric with an average utilization. An entry in the HorizontalPodAutoscaler's own form is taken
// as written.
func hpaMetric(m *inferencev1alpha1.AutoscalingMetric) (autoscalingv2.MetricSpec, error) {
	if m.Name == "" {
		return autoscalingv2.MetricSpec{
			Type: m.Type, Object: m.Object, Pods: m.Pods, Resource: m.Resource,
			ContainerResource: m.ContainerResource, External: m.External,
		}, nil
	}
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if m.TargetAverageUtilization == nil {
			return autoscalingv2.MetricSpec{}, fmt.Errorf("type Resource with name %q needs targetAverageUtilization", m.Name)
		}
		return autoscalingv2.MetricSpec{Type: m.Type, Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceName(m.Name),
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: m.TargetAverageUtilization},
		}}, nil
	default: // Pods: admission allows no other type with a name.
		// LLMKube's CRD accepts any string here, so a stored object may hold one that is no
		// quantity: that is an error of the plan (a condition naming the field), not a panic.
		if m.TargetAverageValue == nil {
			return autoscalingv2.MetricSpec{}, fmt.Errorf("type Pods with name %q needs targetAverageValue", m.Name)
		}
		q, err := resource.ParseQuantity(*m.TargetAverageValue)
		if err != nil {
			return autoscalingv2.MetricSpec{}, fmt.Errorf("targetAverageValue %q: %w", *m.TargetAverageValue, err)
		}
		return autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: m.Name},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q},
		}}, nil
	}
}
