/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/test/kubescore"
)

// The Deployments the operator writes pass kube-score as the chart does, with the same ignore
// list (hack/kube-score.ignore): what is read back from the API server, defaults filled in.
var _ = Describe("kube-score", func() {
	It("scores the Deployments of an InferenceService and a ModelRouter clean [H5]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		// Resources and a non-root security context, as a production InferenceService sets them.
		newISVC(ns, "llm", func(is *inferencev1alpha1.InferenceService) {
			cpu, memory := resource.MustParse("4"), resource.MustParse("16Gi")
			is.Spec.Resources = &inferencev1alpha1.ResourceSpec{CPU: &cpu, Memory: &memory}
			is.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532)}
			is.Spec.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}
		})
		newRouter(ns, "mr", nil)
		var docs []byte
		for _, name := range []string{"llm", "mr-router-proxy"} {
			d := eventuallyDeployment(ns, name, func(g Gomega, d *appsv1.Deployment) {})
			d.ManagedFields = nil
			d.APIVersion, d.Kind = "apps/v1", "Deployment"
			data, err := yaml.Marshal(d)
			Expect(err).NotTo(HaveOccurred())
			docs = append(append(docs, "---\n"...), data...)
		}
		report, err := kubescore.Score(docs)
		GinkgoWriter.Print(report)
		Expect(err).NotTo(HaveOccurred())
	})
})
