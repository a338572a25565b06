/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// freezeConfigMap creates a ValidatingAdmissionPolicy (and its binding) that denies every update
// of the ConfigMap named in ns, waits until the API server enforces it, and returns a function that
// deletes both.
func freezeConfigMap(ns, name string) (unfreeze func()) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.metadata.name != '" + name + "'",
				Message:    "routing documents are frozen for maintenance",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	Expect(k8sClient.Create(suiteCtx, policy)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, binding)).To(Succeed())
	unfreeze = func() {
		_ = k8sClient.Delete(suiteCtx, binding)
		_ = k8sClient.Delete(suiteCtx, policy)
	}
	DeferCleanup(unfreeze)
	// The API server loads policies through an informer: wait until a dry-run update is denied.
	Eventually(func() bool {
		cm := &corev1.ConfigMap{}
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			return false
		}
		cm.Labels = map[string]string{"probe": time.Now().Format("150405.000000")}
		err := k8sClient.Update(suiteCtx, cm, client.DryRunAll)
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err)
	}).WithTimeout(20 * time.Second).Should(BeTrue())
	return unfreeze
}

var _ = Describe("A refused apply", func() {
	It("says a routing document did not land, rolls no router pod, and lands it once the admission policy is gone [R18]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		newRouter(ns, "r", nil)
		name := "r-router-proxy"
		old := eventuallyDeployment(ns, name, func(Gomega, *appsv1.Deployment) {}).Generation
		unfreeze := freezeConfigMap(ns, name)

		editRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, externalBackend("second", ""))
		})
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getRouter(ns, "r").Status.Conditions, inferencev1alpha1.ConditionDegraded)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("routing documents are frozen"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Consistently(func() int64 { return deployment(ns, name).Generation }).WithTimeout(2*time.Second).
			Should(Equal(old), "a routing change rolled the pods")

		By("the denial ends: the refused apply is retried without a spec change")
		unfreeze()
		start := time.Now()
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
			g.Expect(cm.Data[modelrouter.ConfigKey]).To(ContainSubstring("second"))
			g.Expect(deployment(ns, name).Generation).To(Equal(old), "the proxy rereads its document: no roll")
			g.Expect(meta.IsStatusConditionFalse(getRouter(ns, "r").Status.Conditions, inferencev1alpha1.ConditionDegraded)).To(BeTrue())
		}).WithTimeout(70 * time.Second).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("landed %s after the policy was deleted\n", time.Since(start))

		evs := &eventsv1.EventList{}
		Expect(k8sClient.List(suiteCtx, evs, client.InNamespace(ns))).To(Succeed())
		var warnings int
		for _, e := range evs.Items {
			if e.Regarding.Name == "r" && e.Reason == "ApplyFailed" {
				warnings++
			}
		}
		Expect(warnings).To(Equal(1), "one Warning for the one rejection, however often it was retried")
	})
})
