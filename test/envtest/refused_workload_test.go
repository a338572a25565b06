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
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/model"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
)

// usersDeployment creates a Deployment a namespace user wrote, of replicas pods labelled app=name.
func usersDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/payments:1"}}},
			},
		},
	}
	Expect(k8sClient.Create(suiteCtx, d)).To(Succeed())
	return d
}

// available writes the status a kube-controller-manager would once the Deployment's pods are
// ready.
func available(ns, name string) {
	d := deployment(ns, name)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	Expect(k8sClient.Status().Update(suiteCtx, d)).To(Succeed())
}

// absent says the object named does not exist.
func absent(g Gomega, ns, name string, obj client.Object) {
	err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, obj)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s exists (err %v)", obj, name, err)
}

var _ = Describe("Nothing derived from a refused workload", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("applies no HPA or Service for a Deployment it does not control, and deletes its own HPA that would scale it [O16, O11]", func() {
		users := usersDeployment(ns, "payments", 3)
		isvc := newISVC(ns, "payments", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Replicas = nil
			i.Spec.Autoscaling = &inferencev1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 100}
		})
		By("an HPA an earlier operator version applied for the InferenceService, targeting the user's Deployment")
		isvc = getISVC(ns, "payments")
		earlier := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "payments", Labels: map[string]string{ownership.LabelManagedBy: ownership.ManagedBy},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: inferencev1alpha1.GroupVersion.String(), Kind: "InferenceService",
					Name: isvc.Name, UID: isvc.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "payments"},
				MinReplicas:    ptr.To[int32](1), MaxReplicas: 100,
			},
		}
		Expect(k8sClient.Create(suiteCtx, earlier, client.FieldOwner(ownership.DefaultFieldManager))).To(Succeed())
		startOperator(ns, controllers.Config{})

		notControlled(ns, "payments", &inferencev1alpha1.InferenceService{}, "Deployment "+ns+"/payments", "no controller")
		Eventually(func(g Gomega) {
			absent(g, ns, "payments", &autoscalingv2.HorizontalPodAutoscaler{})
		}).WithTimeout(20*time.Second).Should(Succeed(), "an HPA of the operator's would scale the user's Deployment")
		touch(ns, "payments")
		Consistently(func(g Gomega) {
			absent(g, ns, "payments", &autoscalingv2.HorizontalPodAutoscaler{})
			absent(g, ns, "payments", &corev1.Service{})
			d := deployment(ns, "payments")
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
			g.Expect(d.OwnerReferences).To(BeEmpty())
			g.Expect(d.Spec.Template).To(Equal(users.Spec.Template))
		}).WithTimeout(3 * time.Second).Should(Succeed())
	})

	It("reports a refused InferenceService's workload as not its own: no readiness, endpoint or replica count, and its Model is not Loaded [O17]", func() {
		startOperator(ns, controllers.Config{})
		newRouter(ns, "chat", nil)
		eventuallyDeployment(ns, "chat-router-proxy", func(Gomega, *appsv1.Deployment) {})
		available(ns, "chat-router-proxy")
		newModel(ns, "m", nil)
		refISVC(ns, "chat-router-proxy", "m", inferencev1alpha1.RuntimeVLLM, nil)

		notControlled(ns, "chat-router-proxy", &inferencev1alpha1.InferenceService{}, "Deployment "+ns+"/chat-router-proxy", "ModelRouter chat")
		Eventually(func(g Gomega) {
			i := getISVC(ns, "chat-router-proxy")
			ready := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), ready.Message)
			g.Expect(ready.Reason).To(Equal("NotControlled"))
			progressing := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionProgressing)
			g.Expect(progressing).NotTo(BeNil())
			g.Expect(progressing.Reason).To(Equal("NotControlled"))
			g.Expect(i.Status.Endpoint).To(BeEmpty())
			g.Expect(i.Status.Ready).To(BeEmpty())
			g.Expect(i.Status.ReadyReplicas).To(BeZero())
			g.Expect(i.Status.Replicas).To(BeZero())
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			m := &inferencev1alpha1.Model{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, m)).To(Succeed())
			c := meta.FindStatusCondition(m.Status.Conditions, inferencev1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).NotTo(Equal(model.ReasonLoaded), c.Message)
		}).WithTimeout(3 * time.Second).Should(Succeed())
	})

	It("reports a refused router's proxy as not its own, never Ready from an InferenceService's pods [O17]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "chat-router-proxy", nil)
		eventuallyDeployment(ns, "chat-router-proxy", func(Gomega, *appsv1.Deployment) {})
		available(ns, "chat-router-proxy")
		newRouter(ns, "chat", nil)

		notControlled(ns, "chat", &inferencev1alpha1.ModelRouter{}, "Deployment "+ns+"/chat-router-proxy", "InferenceService chat-router-proxy")
		Eventually(func(g Gomega) {
			ready := meta.FindStatusCondition(getRouter(ns, "chat").Status.Conditions, inferencev1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), ready.Message)
			g.Expect(ready.Reason).To(Equal("NotControlled"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		absent(Default, ns, "chat-router-proxy", &corev1.ConfigMap{})
	})

	It("resolves no backend whose Service the InferenceService does not control, and routes nothing to it [O18]", func() {
		unrelated := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llama"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "unrelated-app"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		Expect(k8sClient.Create(suiteCtx, unrelated)).To(Succeed())
		startOperator(ns, controllers.Config{})
		newISVC(ns, "llama", nil)
		notControlled(ns, "llama", &inferencev1alpha1.InferenceService{}, "Service "+ns+"/llama", "no controller")
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", "llama"), externalBackend("cloud", "")}
		})

		Eventually(func(g Gomega) {
			r := getRouter(ns, "r")
			c := meta.FindStatusCondition(r.Status.Conditions, inferencev1alpha1.ConditionResolvedRefs)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(r.Generation))
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
			g.Expect(c.Message).To(ContainSubstring("Service " + ns + "/llama"))
			g.Expect(r.Status.BackendsResolved).To(Equal("1/2"))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "r-router-proxy"}, cm)).To(Succeed())
			doc, err := routingv1.Parse([]byte(cm.Data[modelrouter.ConfigKey]))
			g.Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, b := range doc.Backends {
				names = append(names, b.Name)
			}
			g.Expect(names).To(Equal([]string{"cloud"}), "the routing document sends traffic to the unrelated app")
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(getISVC(ns, "llama").Status.Endpoint).To(BeEmpty(), "the endpoint would name the unrelated app's Service")
	})
})
