/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
)

// legacyCreate creates obj from the apply configuration ac the way the records-based operator did:
// a plain create (an Update entry) by field manager "manager".
func legacyCreate(ac any, obj client.Object) {
	data, err := json.Marshal(ac)
	Expect(err).NotTo(HaveOccurred())
	Expect(json.Unmarshal(data, obj)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, obj, client.FieldOwner("manager"))).To(Succeed())
}

// entryOwns says whether the managedFields entry of manager with operation op (any subresource
// but status) owns the field at path (in FieldsV1 notation, "f:spec", "f:template", ...).
func entryOwns(obj client.Object, manager string, op metav1.ManagedFieldsOperationType, path ...string) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != manager || e.Operation != op || e.Subresource == "status" || e.FieldsV1 == nil {
			continue
		}
		var f map[string]any
		Expect(json.Unmarshal(e.FieldsV1.Raw, &f)).To(Succeed())
		if dig(f, path...) != nil {
			return true
		}
	}
	return false
}

// hasEntry says whether obj has a managedFields entry of manager with operation op.
func hasEntry(obj client.Object, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == op {
			return true
		}
	}
	return false
}

var doNotDisruptPath = []string{"f:spec", "f:template", "f:metadata", "f:annotations", "f:" + inferenceservice.AnnotationDoNotDisrupt}

var _ = Describe("Upgrade from the records-based operator: every applied kind, once", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("migrates the Service: a port the legacy operator co-owns does not block a port change [U2]", func() {
		isvc := newISVC(ns, "svc", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](8080)}
		})
		legacyReconcile(ns, "svc", true)
		legacyCreate(inferenceservice.Service(isvc), &corev1.Service{})

		startOperator(ns, controllers.Config{})
		eventually(ns, "svc", &corev1.Service{}, func(g Gomega, s *corev1.Service) {
			g.Expect(hasEntry(s, ownership.DefaultFieldManager, metav1.ManagedFieldsOperationApply)).To(BeTrue())
		})
		editISVC(ns, "svc", func(i *inferencev1alpha1.InferenceService) { i.Spec.Endpoint.Port = ptr.To[int32](9000) })
		s := eventually(ns, "svc", &corev1.Service{}, func(g Gomega, s *corev1.Service) {
			g.Expect(s.Spec.Ports).To(HaveLen(1))
			g.Expect(s.Spec.Ports[0].Port).To(Equal(int32(9000)))
		})
		Expect(s.Spec.Ports[0].Name).To(Equal("http"))
		Expect(hasEntry(s, "manager", metav1.ManagedFieldsOperationUpdate)).To(BeFalse(), "the legacy entry is gone")
		Eventually(func(g Gomega) {
			i := getISVC(ns, "svc")
			g.Expect(i.Status.ObservedGeneration).To(Equal(i.Generation))
			g.Expect(meta.IsStatusConditionFalse(i.Status.Conditions, inferencev1alpha1.ConditionDegraded)).To(BeTrue(), "%v", i.Status.Conditions)
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("migrates the HPA and a router's ConfigMap by the same code: no legacy Update entry is left [U2]", func() {
		isvc := newISVC(ns, "auto", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Autoscaling = &inferencev1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3}
		})
		hpa, err := inferenceservice.HPA(isvc)
		Expect(err).NotTo(HaveOccurred())
		legacyCreate(hpa, &autoscalingv2.HorizontalPodAutoscaler{})
		router := newRouter(ns, "r", nil)
		legacyCreate(modelrouter.ConfigMap(router, map[string]string{"legacy.json": "{}"}), &corev1.ConfigMap{})

		startOperator(ns, controllers.Config{})
		eventually(ns, "auto", &autoscalingv2.HorizontalPodAutoscaler{}, func(g Gomega, h *autoscalingv2.HorizontalPodAutoscaler) {
			g.Expect(hasEntry(h, ownership.DefaultFieldManager, metav1.ManagedFieldsOperationApply)).To(BeTrue())
			g.Expect(hasEntry(h, "manager", metav1.ManagedFieldsOperationUpdate)).To(BeFalse(), "the legacy entry is gone")
		})
		cm := eventually(ns, modelrouter.Name(router), &corev1.ConfigMap{}, func(g Gomega, c *corev1.ConfigMap) {
			g.Expect(hasEntry(c, ownership.DefaultFieldManager, metav1.ManagedFieldsOperationApply)).To(BeTrue())
			g.Expect(hasEntry(c, "manager", metav1.ManagedFieldsOperationUpdate)).To(BeFalse(), "the legacy entry is gone")
		})
		Expect(cm.Data).To(HaveKey("legacy.json"), "released, never deleted")
	})

	It("migrates once: another controller named manager keeps what it writes by Update afterwards [U3]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "n", nil)
		eventuallyDeployment(ns, "n", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(hasEntry(d, ownership.DefaultFieldManager, metav1.ManagedFieldsOperationApply)).To(BeTrue())
		})
		for i := range 3 {
			before := reconciles(isvcController)
			edit(ns, "n", &appsv1.Deployment{}, func(d *appsv1.Deployment) {
				if d.Annotations == nil {
					d.Annotations = map[string]string{}
				}
				d.Annotations["other.example.com/rev"] = fmt.Sprint(i)
			}, client.FieldOwner("manager"))
			settle(isvcController, before, 1)
		}
		d := deployment(ns, "n")
		Expect(d.Annotations).To(HaveKeyWithValue("other.example.com/rev", "2"))
		Expect(entryOwns(d, "manager", metav1.ManagedFieldsOperationUpdate, "f:metadata", "f:annotations", "f:other.example.com/rev")).
			To(BeTrue(), "the other controller keeps its key")
		Expect(eventNotes(ns, "n", "OwnershipMigrated")).To(BeEmpty())
	})

	It("--legacy-field-managers= (empty) means no legacy manager [U7]", func() {
		newISVC(ns, "none", nil)
		legacyReconcile(ns, "none", false)
		startOperator(ns, controllers.Config{LegacyFieldManagers: []string{}})
		eventuallyDeployment(ns, "none", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(hasEntry(d, ownership.DefaultFieldManager, metav1.ManagedFieldsOperationApply)).To(BeTrue())
		})
		settle(isvcController, reconciles(isvcController), 0)
		Expect(hasEntry(deployment(ns, "none"), "manager", metav1.ManagedFieldsOperationUpdate)).To(BeTrue())
		Expect(eventNotes(ns, "none", "OwnershipMigrated")).To(BeEmpty())
	})

	It("keeps startup protection owned on a migrated Ready Deployment; it leaves with the next roll [U6]", func() {
		newISVC(ns, "ready", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a"}
		})
		legacyReconcile(ns, "ready", true)
		Expect(deployment(ns, "ready").Spec.Template.Annotations).To(HaveKeyWithValue(inferenceservice.AnnotationDoNotDisrupt, "true"))
		markReady(ns, "ready")

		startOperator(ns, controllers.Config{})
		d := eventuallyDeployment(ns, "ready", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Annotations).NotTo(HaveKey(ownership.RecordLabels))
		})
		settle(isvcController, reconciles(isvcController), 0)
		d = deployment(ns, "ready")
		if _, ok := d.Spec.Template.Annotations[inferenceservice.AnnotationDoNotDisrupt]; ok {
			Expect(entryOwns(d, ownership.DefaultFieldManager, metav1.ManagedFieldsOperationApply, doNotDisruptPath...)).
				To(BeTrue(), "do-not-disrupt is on the pods and owned by nobody: it would stay forever")
		}

		By("a roll for another reason drops it")
		editISVC(ns, "ready", func(i *inferencev1alpha1.InferenceService) { i.Spec.PodLabels["team"] = "b" })
		d = eventuallyDeployment(ns, "ready", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "b"))
		})
		Expect(d.Spec.Template.Annotations).NotTo(HaveKey(inferenceservice.AnnotationDoNotDisrupt))
	})
})

// markReady writes a status with one ready replica, as the Deployment controller would.
func markReady(ns, name string) {
	Eventually(func() error {
		d := deployment(ns, name)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
		return k8sClient.Status().Update(suiteCtx, d)
	}).Should(Succeed())
}
