/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
)

// pair creates the Model and InferenceService the outside review restarted the operator over.
func pair(ns string, i int) {
	name := fmt.Sprintf("p-%03d", i)
	newModel(ns, name, func(m *inferencev1alpha1.Model) {
		m.Spec.Source = "bartowski/Llama-3.2-1B-Instruct-GGUF"
		m.Spec.Format = inferencev1alpha1.ModelFormatGGUF
		m.Spec.Quantization = "Q4_K_M"
	})
	refISVC(ns, name, name, inferencev1alpha1.RuntimeLlamaCPP, func(s *inferencev1alpha1.InferenceService) {
		s.Spec.Replicas = ptr.To[int32](1)
		s.Spec.Resources = &inferencev1alpha1.ResourceSpec{CPU: ptr.To(resource.MustParse("1")), Memory: ptr.To(resource.MustParse("2Gi"))}
		s.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a"}
	})
}

var _ = Describe("Steady state and restarts send nothing", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("reads a blocked InferenceService's Deployment once per change, not on every reconcile, and still creates it on a fresh read [F11]", func() {
		op := startOperator(ns, controllers.Config{})
		refISVC(ns, "early", "later", inferencev1alpha1.RuntimeVLLM, nil)
		Eventually(func(g Gomega) {
			g.Expect(modelResolvedOf(g, ns, "early").Reason).To(Equal(inferenceservice.ReasonModelNotFound))
		}).Should(Succeed())
		settle(isvcController, reconciles(isvcController), 0)
		mark, before := op.mark(), reconciles(isvcController)
		for range 3 {
			b := reconciles(isvcController)
			touch(ns, "early")
			settle(isvcController, b, 1)
		}
		Expect(reconciles(isvcController)).To(BeNumerically(">=", before+3))
		Expect(readsOf(op.requestsSince(mark), "/deployments/")).To(BeEmpty(), "no read of the Deployment while nothing changed")

		newModel(ns, "later", nil)
		eventuallyDeployment(ns, "early", func(g Gomega, d *appsv1.Deployment) {})
	})

	It("writes no Model status on a restart over converged Model and InferenceService pairs [F12, M9]", func() {
		n := int(envInt("LLMKUBE_STEADY_PAIRS", 40))
		op := startOperator(ns, controllers.Config{})
		for i := range n {
			pair(ns, i)
		}
		Eventually(func(g Gomega) {
			for i := range n {
				name := fmt.Sprintf("p-%03d", i)
				m := &inferencev1alpha1.Model{}
				m = eventually(ns, name, m, func(g Gomega, m *inferencev1alpha1.Model) {})
				g.Expect(m.Status.InferenceServices).To(BeEquivalentTo(1), name)
				g.Expect(meta.FindStatusCondition(m.Status.Conditions, inferencev1alpha1.ConditionReady)).NotTo(BeNil())
				s := getISVC(ns, name)
				g.Expect(s.Status.ObservedGeneration).To(Equal(s.Generation))
			}
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		settle(isvcController, reconciles(isvcController), 0)
		settle("model", reconciles("model"), 0)
		op.stop()

		before := reconciles("model")
		op = startOperator(ns, controllers.Config{})
		settle("model", before, n)
		settle(isvcController, reconciles(isvcController), 0)
		var statusWrites []string
		for _, w := range op.writes(0) {
			if strings.Contains(w, "/models/") {
				statusWrites = append(statusWrites, w)
			}
		}
		Expect(statusWrites).To(BeEmpty(), "a restart writes no Model status")
		Expect(op.writes(0)).To(BeEmpty(), "a restart writes nothing")
	})
})

var _ = Describe("A Model's claim size", func() {
	It("takes the largest size asked; a larger one on an unbound claim is refused and the claim keeps its size [M7, M6]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		newModel(ns, "m", nil)
		sized := func(size string) func(*inferencev1alpha1.InferenceService) {
			return func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse(size))}
			}
		}
		refISVC(ns, "small", "m", inferencev1alpha1.RuntimeVLLM, sized("20Gi"))
		eventually(ns, "m-model-cache", &corev1.PersistentVolumeClaim{}, func(g Gomega, p *corev1.PersistentVolumeClaim) {
			g.Expect(p.Spec.Resources.Requests.Storage().String()).To(Equal("20Gi"))
		})
		By("no provisioner binds it: a larger size is a resize the API server refuses on an unbound claim")
		refISVC(ns, "large", "m", inferencev1alpha1.RuntimeVLLM, sized("30Gi"))
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getISVC(ns, "large").Status.Conditions, inferencev1alpha1.ConditionDegraded)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("model cache claim m-model-cache"))
			g.Expect(c.Message).To(ContainSubstring("on a bound claim"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(eventNotes(ns, "large", "ApplyFailed")).NotTo(BeEmpty(), "a Warning Event says so")
		claim := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m-model-cache"}, claim)).To(Succeed())
		Expect(claim.Spec.Resources.Requests.Storage().String()).To(Equal("20Gi"), "the claim keeps its size")
		Expect(meta.IsStatusConditionTrue(getISVC(ns, "small").Status.Conditions, inferencev1alpha1.ConditionDegraded)).To(BeFalse())
	})
})
