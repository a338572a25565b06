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
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

var _ = Describe("Bad input admission cannot see", func() {
	DescribeTable("ends Degraded with a Warning Event quoting the API server, and leaves the running Deployment exactly as it was [F1]",
		func(breakSpec func(*inferencev1alpha1.InferenceService), apiServerSays string) {
			ns := newNamespace()
			op := startOperator(ns, controllers.Config{})
			newISVC(ns, "llm", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodAnnotations = map[string]string{"example.com/a": "1"}
			})
			Eventually(func(g Gomega) {
				isvc := getISVC(ns, "llm")
				g.Expect(meta.IsStatusConditionFalse(isvc.Status.Conditions, "Degraded")).To(BeTrue())
			}).WithTimeout(20 * time.Second).Should(Succeed())
			settle(isvcController, reconciles(isvcController), 0)
			running := deployment(ns, "llm")

			editISVC(ns, "llm", breakSpec)
			Eventually(func(g Gomega) {
				isvc := getISVC(ns, "llm")
				c := meta.FindStatusCondition(isvc.Status.Conditions, "Degraded")
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(c.Reason).To(Equal("ApplyRejected"))
				g.Expect(c.Message).To(ContainSubstring(apiServerSays))
				g.Expect(c.ObservedGeneration).To(Equal(isvc.Generation))
				g.Expect(isvc.Status.Phase).To(Equal(inferencev1alpha1.PhaseDegraded))
			}).WithTimeout(20 * time.Second).Should(Succeed())
			Eventually(func(g Gomega) {
				evs := &eventsv1.EventList{}
				g.Expect(k8sClient.List(suiteCtx, evs, client.InNamespace(ns))).To(Succeed())
				var notes []string
				for _, e := range evs.Items {
					if e.Type == corev1.EventTypeWarning && e.Regarding.Name == "llm" && e.Reason == "ApplyFailed" {
						notes = append(notes, e.Note)
					}
				}
				g.Expect(notes).To(ContainElement(ContainSubstring(apiServerSays)))
			}).WithTimeout(20 * time.Second).Should(Succeed())

			By("no retry loop on a spec that cannot heal, and the running Deployment untouched")
			before := reconciles(isvcController)
			mark := op.mark()
			time.Sleep(2 * time.Second)
			Expect(reconciles(isvcController) - before).To(BeNumerically("<=", 1))
			Expect(op.writes(mark)).To(BeEmpty())
			now := deployment(ns, "llm")
			Expect(now.ResourceVersion).To(Equal(running.ResourceVersion))
			Expect(now.Spec.Template).To(Equal(running.Spec.Template))

			By("an unrelated reconcile meets the same rejection: no second Warning")
			before, mark = reconciles(isvcController), op.mark()
			touch(ns, "llm")
			settle(isvcController, before, 1)
			for _, w := range op.writes(mark) {
				Expect(w).NotTo(ContainSubstring("/events"), "a second Warning for the same rejection")
			}

			By("fixing the spec clears Degraded")
			editISVC(ns, "llm", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Env = nil
				i.Spec.PodAnnotations = map[string]string{"example.com/a": "2"}
			})
			Eventually(func(g Gomega) {
				isvc := getISVC(ns, "llm")
				g.Expect(meta.IsStatusConditionFalse(isvc.Status.Conditions, "Degraded")).To(BeTrue())
				g.Expect(deployment(ns, "llm").Spec.Template.Annotations).To(HaveKeyWithValue("example.com/a", "2"))
			}).WithTimeout(20 * time.Second).Should(Succeed())
		},
		Entry("pod annotations that together exceed 256 KiB", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodAnnotations = map[string]string{}
			for _, k := range []string{"example.com/a", "example.com/b", "example.com/c", "example.com/d", "example.com/e"} {
				i.Spec.PodAnnotations[k] = strings.Repeat("x", 60*1024)
			}
		}, "Too long: may not be more than 262144 bytes"),
		// Note: the API server checks images only on pods (leading or trailing whitespace), never on a
		// Deployment's template, so no image is rejected by the apply; an env name is.
		Entry("an env var name the Deployment's validation rejects", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Env = []corev1.EnvVar{{Name: "A=B", Value: "x"}}
		}, "spec.template.spec.containers[0].env[0].name: Invalid value: \"A=B\""),
		// An API server message longer than an Event's 1 KiB note limit still gives an Event.
		Entry("forty env var names rejected at once: a message over an Event's 1 KiB limit", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Env = nil
			for n := range 40 {
				i.Spec.Env = append(i.Spec.Env, corev1.EnvVar{Name: fmt.Sprintf("NAME=%02d", n), Value: "x"})
			}
		}, "spec.template.spec.containers[0].env[0].name: Invalid value: \"NAME=00\""),
	)
})
