/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"os"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// generatedRole is config/rbac/role.yaml, the ClusterRole the chart installs.
func generatedRole() *rbacv1.ClusterRole {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.Unmarshal(data, role)).To(Succeed())
	return role
}

// withoutFinalizers is role minus every permission on */finalizers.
func withoutFinalizers(role *rbacv1.ClusterRole) *rbacv1.ClusterRole {
	out := role.DeepCopy()
	for i := range out.Rules {
		out.Rules[i].Resources = slices.DeleteFunc(out.Rules[i].Resources, func(r string) bool {
			return filepath.Base(r) == "finalizers"
		})
	}
	out.Rules = slices.DeleteFunc(out.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Resources) == 0 })
	return out
}

var _ = Describe("Owner references under OwnerReferencesPermissionEnforcement (as on OpenShift)", Ordered, func() {
	var c client.Client
	var ownCfg *rest.Config

	BeforeAll(func() {
		own, err := testenv.New()
		Expect(err).NotTo(HaveOccurred())
		own.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
		ownCfg, err = own.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(own.Stop()).To(Succeed()) })
		c, err = client.New(ownCfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
	})

	// runAs creates namespace ns, binds role to a user of that name, and runs the operator as that
	// user (impersonation) on the namespace.
	runAs := func(ns string, role *rbacv1.ClusterRole) {
		Expect(c.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		role.ObjectMeta = metav1.ObjectMeta{Name: ns}
		Expect(c.Create(suiteCtx, role)).To(Succeed())
		Expect(c.Create(suiteCtx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "operator-" + ns}},
		})).To(Succeed())
		as := rest.CopyConfig(ownCfg)
		as.Impersonate = rest.ImpersonationConfig{UserName: "operator-" + ns}
		startOperatorWith(operatorOptions{restConfig: as, namespaces: []string{ns}})
		Expect(c.Create(suiteCtx, &inferencev1alpha1.InferenceService{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llm"},
			Spec:       inferencev1alpha1.InferenceServiceSpec{Model: inferencev1alpha1.ModelSpec{Source: "org/model"}},
		})).To(Succeed())
	}

	It("creates the Deployment under the generated ClusterRole [H2]", func() {
		runAs("granted", generatedRole())
		Eventually(func() error {
			return c.Get(suiteCtx, client.ObjectKey{Namespace: "granted", Name: "llm"}, &appsv1.Deployment{})
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("reports the missing finalizers permission in status and an Event [F2]", func() {
		runAs("denied", withoutFinalizers(generatedRole()))
		Eventually(func(g Gomega) {
			isvc := &inferencev1alpha1.InferenceService{}
			g.Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: "denied", Name: "llm"}, isvc)).To(Succeed())
			cond := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionDegraded)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(cond.Reason).To(Equal("Forbidden"))
			g.Expect(cond.Message).To(ContainSubstring("update on inferenceservices/finalizers"))
			evs := &eventsv1.EventList{}
			g.Expect(c.List(suiteCtx, evs, client.InNamespace("denied"))).To(Succeed())
			var notes []string
			for _, e := range evs.Items {
				if e.Regarding.Name == "llm" && e.Type == corev1.EventTypeWarning {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(ContainSubstring("update on inferenceservices/finalizers")))
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})
})
