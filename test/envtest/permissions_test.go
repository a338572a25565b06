/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/test/envtest/testenv"
	"github.com/llmkube/operator/test/helmtool"
)

// installPolicies renders the chart's admission policies with values scoped to namespace ns and
// creates them; they are deleted when the spec ends.
func installPolicies(ns string) {
	values := filepath.Join(GinkgoT().TempDir(), "values.yaml")
	Expect(os.WriteFile(values, []byte(`admissionPolicies:
  enabled: true
  allowedRegistries: [ghcr.io/llmkube/, registry.example.com/]
  maxCacheSize: 200Gi
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: `+ns+`}
`), 0o600)).To(Succeed())
	objs, err := helmtool.Template("llmkube-system", "-f", values)
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, o := range objs {
		if !strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			continue
		}
		Expect(k8sClient.Create(suiteCtx, o)).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(suiteCtx, o) })
		n++
	}
	Expect(n).To(Equal(8), "four policies and their bindings")
}

// asUser is a client acting as user name, bound in ns to a Role with rules.
func asUser(ns, name string, rules ...rbacv1.PolicyRule) client.Client {
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	Expect(k8sClient.Create(suiteCtx, role)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: name}},
	})).To(Succeed())
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: name}
	c, err := client.New(as, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

var createOnly = rbacv1.PolicyRule{APIGroups: []string{inferencev1alpha1.GroupVersion.Group},
	Resources: []string{"inferenceservices", "models"}, Verbs: []string{"create", "get"}}

var _ = Describe("Admission policies a platform team opts into (chart admissionPolicies)", func() {
	It("refuses each rule with its message for a user who may only create InferenceServices, and passes an allowed one [F13]", func() {
		ns := newNamespace()
		installPolicies(ns)
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-password"},
			StringData: map[string]string{"password": "s3cret"}})).To(Succeed())
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hf-token"},
			StringData: map[string]string{"HF_TOKEN": "hf_x"}})).To(Succeed())
		alice := asUser(ns, "alice", createOnly,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"hf-token"}, Verbs: []string{"get"}})

		isvc := func(name string, mutate func(*inferencev1alpha1.InferenceService)) *inferencev1alpha1.InferenceService {
			i := &inferencev1alpha1.InferenceService{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: inferencev1alpha1.InferenceServiceSpec{
					Model: inferencev1alpha1.ModelSpec{Source: "hf://org/repo/model.gguf"}, Replicas: ptr.To[int32](1),
				},
			}
			if mutate != nil {
				mutate(i)
			}
			return i
		}
		refused := map[string]struct {
			obj  client.Object
			want string
		}{
			"a foreign registry": {isvc("exfil", func(i *inferencev1alpha1.InferenceService) { i.Spec.Image = ptr.To("attacker.example.com/exfil") }),
				"spec.image attacker.example.com/exfil is not from an allowed registry"},
			"a privileged container": {isvc("priv", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			}), "spec.securityContext.privileged"},
			"an added capability": {isvc("cap", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
			}), "spec.securityContext.capabilities.add"},
			"a Secret the user may not read": {isvc("env", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Env = []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}, Key: "password"}}}}
			}), "spec.env[].valueFrom.secretKeyRef, spec.imagePullSecrets: a Secret named is not one you may read (get)"},
			"a cache over the maximum": {isvc("big", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("100Ti"))}
			}), "spec.modelCache.size 100Ti is over 200Gi"},
			"a Model whose token the user may not read": {&inferencev1alpha1.Model{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gated"},
				Spec: inferencev1alpha1.ModelKindSpec{Source: "org/gated", Format: inferencev1alpha1.ModelFormatSafetensors,
					SourceSecretRef: &inferencev1alpha1.SecretKeyReference{Name: "db-password"}},
			}, "spec.sourceSecretRef: the Secret named is not one you may read (get)"},
		}
		for what, c := range refused {
			By("refused: " + what)
			Eventually(func(g Gomega) {
				err := alice.Create(suiteCtx, c.obj.DeepCopyObject().(client.Object))
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).To(ContainSubstring(c.want))
			}).Should(Succeed())
		}

		By("allowed: an image of an allowed registry, the Secret the user may read, a cache within the maximum")
		Expect(alice.Create(suiteCtx, isvc("ok", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Image = ptr.To("ghcr.io/llmkube/llama.cpp:server")
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("100Gi"))}
			i.Spec.Env = []corev1.EnvVar{{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "hf-token"}, Key: "HF_TOKEN"}}}}
		}))).To(Succeed())
		Expect(alice.Create(suiteCtx, &inferencev1alpha1.Model{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "open"},
			Spec: inferencev1alpha1.ModelKindSpec{Source: "org/open", Format: inferencev1alpha1.ModelFormatSafetensors,
				SourceSecretRef: &inferencev1alpha1.SecretKeyReference{Name: "hf-token"}},
		})).To(Succeed())

		By("another namespace is not bound: the rules stay where the platform put them")
		other := newNamespace()
		Expect(k8sClient.Create(suiteCtx, isvc("exfil", func(i *inferencev1alpha1.InferenceService) {
			i.Namespace = other
			i.Spec.Image = ptr.To("attacker.example.com/exfil")
		}))).To(Succeed())
	})
})
