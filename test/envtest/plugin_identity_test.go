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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

var _ = Describe("kubectl llmkube diff: what the operator deletes and what it refuses", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("[P9] shows the InferencePool and the HTTPRoute a removed spec.gateway deletes, before the operator deletes them", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "m", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gw"}))
		eventually(ns, "m", &inferencepoolv1.InferencePool{}, func(Gomega, *inferencepoolv1.InferencePool) {})
		eventually(ns, "m", &gatewayv1.HTTPRoute{}, func(Gomega, *gatewayv1.HTTPRoute) {})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()
		_, _, code := llmkube("diff", "isvc/m", "-n", ns)
		Expect(code).To(Equal(0), "converged")

		editISVC(ns, "m", func(i *inferencev1alpha1.InferenceService) { i.Spec.Gateway = nil })
		text, stderr, code := llmkube("diff", "isvc/m", "-n", ns)
		Expect(code).To(Equal(1), "the operator will delete two objects: %s%s", text, stderr)
		Expect(text).To(ContainSubstring("# InferencePool " + ns + "/m: delete\n--- live/InferencePool/" + ns + "/m\n+++ /dev/null\n"))
		Expect(text).To(ContainSubstring("# HTTPRoute " + ns + "/m: delete\n--- live/HTTPRoute/" + ns + "/m\n+++ /dev/null\n"))
		names, _, code := llmkube("diff", "isvc/m", "-n", ns, "-o", "name")
		Expect(code).To(Equal(1))
		Expect(names).To(And(ContainSubstring("inferencepool.inference.networking.k8s.io/m\n"), ContainSubstring("httproute.gateway.networking.k8s.io/m\n")))

		By("the operator then deletes exactly those, and the diff is empty")
		startOperator(ns, controllers.Config{})
		Eventually(func(g Gomega) {
			absent(g, ns, "m", &inferencepoolv1.InferencePool{})
			absent(g, ns, "m", &gatewayv1.HTTPRoute{})
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Eventually(func() int {
			_, _, code := llmkube("diff", "isvc/m", "-n", ns)
			return code
		}).WithTimeout(20 * time.Second).Should(Equal(0))
	})

	It("[P10] shows a refused claim, Service and Deployment as refused, with who controls them, never a change or a Deployment the operator will not create; exit 1", func() {
		By("someone else's objects under the names the operator would write, specs alike, so an apply would take them over")
		Expect(k8sClient.Create(suiteCtx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 80}}}})).To(Succeed())
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x-cache"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("500Gi")}},
			},
		}
		Expect(k8sClient.Create(suiteCtx, claim)).To(Succeed())
		usersDeployment(ns, "y", 1)
		usersDeployment(ns, "chat-router-proxy", 1)
		newISVC(ns, "x", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("500Gi"))}
		})
		newISVC(ns, "y", nil)
		newRouter(ns, "chat", nil)

		By("isvc/x: its claim and its Service are refused, and no Deployment is previewed")
		doc, code := planOf(ns, "isvc/x")
		Expect(code).To(Equal(1), "a refusal is a difference worth attention")
		Expect(actionsOf(doc)).To(Equal(map[string]string{"PersistentVolumeClaim/x-cache": "refused", "Service/x": "refused"}), "%v", doc)
		for _, o := range doc.Objects {
			Expect(o.Refused).To(And(ContainSubstring("InferenceService x does not control it"), ContainSubstring("no controller"), ContainSubstring("leaves it untouched")), o.Kind)
			Expect(o.Diff).To(BeEmpty(), o.Kind)
		}
		text, _, code := llmkube("diff", "isvc/x", "-n", ns)
		Expect(code).To(Equal(1))
		Expect(text).To(ContainSubstring("# Service " + ns + "/x: refused, the operator does nothing to it: Service " + ns + "/x: not the operator's to write"))
		Expect(text).To(ContainSubstring("# PersistentVolumeClaim " + ns + "/x-cache: refused"))
		Expect(text).To(ContainSubstring("no Deployment is applied while an object applied before it is refused"))
		Expect(text).NotTo(ContainSubstring("applied/"), "no change and no create is shown")
		names, _, code := llmkube("diff", "isvc/x", "-n", ns, "-o", "name")
		Expect(code).To(Equal(1))
		Expect(names).To(BeEmpty(), "-o name lists what would change: nothing")

		By("isvc/y and mr/chat: a Deployment of someone else's is refused, never created or changed")
		for target, row := range map[string]string{"isvc/y": "Deployment/y", "mr/chat": "Deployment/chat-router-proxy"} {
			doc, code := planOf(ns, target)
			Expect(code).To(Equal(1), target)
			Expect(actionsOf(doc)).To(Equal(map[string]string{row: "refused"}), "%s: %v", target, doc)
			Expect(doc.Objects[0].Refused).To(ContainSubstring("no controller"), target)
		}

		By("the operator indeed leaves every one of them as it is, and creates no Deployment for x")
		startOperator(ns, controllers.Config{})
		notControlled(ns, "x", &inferencev1alpha1.InferenceService{}, "PersistentVolumeClaim "+ns+"/x-cache", "no controller")
		notControlled(ns, "y", &inferencev1alpha1.InferenceService{}, "Deployment "+ns+"/y", "no controller")
		notControlled(ns, "chat", &inferencev1alpha1.ModelRouter{}, "Deployment "+ns+"/chat-router-proxy", "no controller")
		Consistently(func(g Gomega) {
			absent(g, ns, "x", &appsv1.Deployment{})
			for name, obj := range map[string]client.Object{"x": &corev1.Service{}, "x-cache": &corev1.PersistentVolumeClaim{}, "y": &appsv1.Deployment{}, "chat-router-proxy": &appsv1.Deployment{}} {
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, obj)).To(Succeed())
				g.Expect(obj.GetOwnerReferences()).To(BeEmpty(), name)
				g.Expect(managersOf(obj, "")).NotTo(ContainElement("llmkube-operator"), name)
			}
		}).WithTimeout(3 * time.Second).Should(Succeed())
	})
})
