/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

var _ = Describe("An inline model's cache claim", func() {
	It("is deleted when the cache switches to Ephemeral, and kubectl llmkube diff says so first [O20]", func() {
		ns := newNamespace()
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "x", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("500Gi"))}
		})
		eventually(ns, "x-cache", &corev1.PersistentVolumeClaim{}, func(g Gomega, c *corev1.PersistentVolumeClaim) {
			g.Expect(controllerOf(c)).To(Equal("InferenceService/x"))
		})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()

		editISVC(ns, "x", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Persistence: ptr.To(inferencev1alpha1.ModelCacheEphemeral)}
		})
		text, _, code := llmkube("diff", "isvc/x", "-n", ns)
		Expect(code).To(Equal(1), "something would change: %s", text)
		Expect(text).To(ContainSubstring("--- live/PersistentVolumeClaim/" + ns + "/x-cache"))
		Expect(text).To(MatchRegexp(`(?m)^-\s+storage: 500Gi$`))

		startOperator(ns, controllers.Config{})
		Eventually(func(g Gomega) {
			c := &corev1.PersistentVolumeClaim{}
			err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "x-cache"}, c)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			// The PVC protection finalizer keeps it while a pod mounts it; nothing removes it here.
			g.Expect(c.DeletionTimestamp).NotTo(BeNil(), "the 500Gi claim outlives the switch to Ephemeral")
		}).WithTimeout(20 * time.Second).Should(Succeed())
		eventuallyDeployment(ns, "x", func(g Gomega, d *appsv1.Deployment) {
			for _, v := range d.Spec.Template.Spec.Volumes {
				g.Expect(v.PersistentVolumeClaim).To(BeNil())
			}
		})
	})
})
