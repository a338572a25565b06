/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

// asPreviousRelease writes status.observedGeneration as the release that last reconciled isvc did.
func asPreviousRelease(ns, name string) {
	Eventually(func() error {
		i := getISVC(ns, name)
		i.Status.ObservedGeneration = i.Generation
		return k8sClient.Status().Update(suiteCtx, i)
	}).Should(Succeed())
}

// readsOf are the GET requests among reqs whose path contains part.
func readsOf(reqs []string, part string) []string {
	var out []string
	for _, r := range reqs {
		if strings.HasPrefix(r, "GET ") && strings.Contains(r, part) {
			out = append(out, r)
		}
	}
	return out
}

var _ = Describe("Deletions the operator owes, decided against the API server", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("deletes an HPA without the managed-by label once spec.autoscaling left while the operator was down, and reads nothing on a restart [O22]", func() {
		autoscaled := func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Autoscaling = &inferencev1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3}
		}
		By("the records-based operator's HPA (an Update by manager) and a previous release's (an apply without the label)")
		legacy := newISVC(ns, "legacy", autoscaled)
		hpa, err := inferenceservice.HPA(legacy)
		Expect(err).NotTo(HaveOccurred())
		legacyCreate(hpa, &autoscalingv2.HorizontalPodAutoscaler{})
		previous := newISVC(ns, "previous", autoscaled)
		hpa, err = inferenceservice.HPA(previous)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Apply(suiteCtx, hpa, client.FieldOwner(ownership.DefaultFieldManager), client.ForceOwnership)).To(Succeed())
		By("someone else's HPA of a third name stays: it is not the InferenceService's")
		third := newISVC(ns, "third", autoscaled)
		hpa, err = inferenceservice.HPA(third)
		Expect(err).NotTo(HaveOccurred())
		hpa.OwnerReferences = nil
		Expect(k8sClient.Apply(suiteCtx, hpa, client.FieldOwner("someone"), client.ForceOwnership)).To(Succeed())
		for _, n := range []string{"legacy", "previous", "third"} {
			asPreviousRelease(ns, n)
		}

		By("spec.autoscaling leaves before the new operator first reconciles")
		for _, n := range []string{"legacy", "previous", "third"} {
			editISVC(ns, n, func(i *inferencev1alpha1.InferenceService) { i.Spec.Autoscaling = nil })
		}
		op := startOperator(ns, controllers.Config{})
		for _, n := range []string{"legacy", "previous"} {
			Eventually(func() bool {
				err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: n}, &autoscalingv2.HorizontalPodAutoscaler{})
				return apierrors.IsNotFound(err)
			}).WithTimeout(20*time.Second).Should(BeTrue(), "the HPA of %s is deleted", n)
		}
		for _, n := range []string{"legacy", "previous", "third"} {
			eventually(ns, n, &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
				g.Expect(i.Status.ObservedGeneration).To(Equal(i.Generation))
			})
		}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "third"}, &autoscalingv2.HorizontalPodAutoscaler{})).
			To(Succeed(), "an HPA the InferenceService does not control is left alone")

		By("steady state and a restart: no read of an HPA")
		before := reconciles(isvcController)
		mark := op.mark()
		for _, n := range []string{"legacy", "previous", "third"} {
			touch(ns, n)
		}
		settle(isvcController, before, 3)
		Expect(readsOf(op.requestsSince(mark), "horizontalpodautoscalers/")).To(BeEmpty())
		op.stop()
		before = reconciles(isvcController)
		op = startOperator(ns, controllers.Config{})
		settle(isvcController, before, 3)
		Expect(readsOf(op.requestsSince(0), "horizontalpodautoscalers/")).To(BeEmpty(), "a restart over converged InferenceServices reads no HPA")
	})
})
