/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

const routerController = "modelrouter"

func isvcBackend(name, isvc string) inferencev1alpha1.Backend {
	return inferencev1alpha1.Backend{Name: name, InferenceServiceRef: &inferencev1alpha1.LocalObjectReference{Name: isvc}}
}

func externalBackend(name, secret string) inferencev1alpha1.Backend {
	b := inferencev1alpha1.Backend{Name: name, External: &inferencev1alpha1.ExternalBackend{Provider: "openai", URL: "https://api.example.com/v1"}}
	if secret != "" {
		b.External.CredentialsSecretRef = &inferencev1alpha1.LocalObjectReference{Name: secret}
	}
	return b
}

func newRouter(ns, name string, mutate func(*inferencev1alpha1.ModelRouter)) *inferencev1alpha1.ModelRouter {
	r := &inferencev1alpha1.ModelRouter{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       inferencev1alpha1.ModelRouterSpec{Backends: []inferencev1alpha1.Backend{externalBackend("cloud", "")}},
	}
	if mutate != nil {
		mutate(r)
	}
	Expect(k8sClient.Create(suiteCtx, r)).To(Succeed())
	return r
}

// editRouter changes the spec as a person would, retrying on conflicts.
func editRouter(ns, name string, change func(*inferencev1alpha1.ModelRouter)) {
	edit(ns, name, &inferencev1alpha1.ModelRouter{}, change)
}

// touchRouter changes nothing the operator reads but makes it reconcile the router.
func touchRouter(ns, name string) {
	editRouter(ns, name, func(r *inferencev1alpha1.ModelRouter) { touched(r) })
}

func getRouter(ns, name string) *inferencev1alpha1.ModelRouter {
	r := &inferencev1alpha1.ModelRouter{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, r)).To(Succeed())
	return r
}

func eventuallyConfigMap(ns, name string, match func(g Gomega, cm *corev1.ConfigMap)) *corev1.ConfigMap {
	return eventually(ns, name, &corev1.ConfigMap{}, match)
}

func routerSelector(name string) map[string]string {
	return map[string]string{"app": name + "-router-proxy", "inference.llmkube.dev/model-router": name}
}

func expectRouterSelectors(g Gomega, ns, name string) {
	d := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name + "-router-proxy"}, d)).To(Succeed())
	g.Expect(d.Spec.Selector.MatchLabels).To(Equal(routerSelector(name)))
	g.Expect(d.Spec.Selector.MatchExpressions).To(BeEmpty())
	svc := &corev1.Service{}
	g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name + "-router-proxy"}, svc)).To(Succeed())
	g.Expect(svc.Spec.Selector).To(Equal(routerSelector(name)))
}

// quietWrites settles both controllers, then makes the router reconcile by an unrelated touch and
// returns what the operator wrote meanwhile.
func quietWrites(op *operator, ns, name string) []string {
	settle(isvcController, reconciles(isvcController), 0)
	settle(routerController, reconciles(routerController), 0)
	mark := op.mark()
	before := reconciles(routerController)
	touchRouter(ns, name)
	settle(routerController, before, 1)
	return op.writes(mark)
}

var _ = Describe("ModelRouter reconciler", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("keeps the proxy's pod metadata ownership in managedFields through the whole lifecycle [O1, O2]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "llama", nil)
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, isvcBackend("local", "llama"))
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{
				PodLabels:      map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"},
				PodAnnotations: map[string]string{"example.com/owner": "alice"},
			}
		})

		By("the spec's keys reach the proxy's pod template")
		d := eventuallyDeployment(ns, "r-router-proxy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("example.com/owner", "alice"))
		})
		Expect(d.OwnerReferences).To(HaveLen(1))
		Expect(d.OwnerReferences[0].Kind).To(Equal("ModelRouter"))
		Expect(d.Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
		Eventually(func(g Gomega) { expectRouterSelectors(g, ns, "r") }).Should(Succeed())
		eventuallyConfigMap(ns, "r-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(fmt.Sprintf("http://llama.%s.svc.cluster.local:8080", ns)))
		})

		By("other tools add their keys")
		woken := reconciles(routerController)
		otherToolsWrite(ns, "r-router-proxy")

		By("an unchanged spec writes nothing, status included")
		settle(routerController, woken, 1) // the other tools' writes woke the operator
		d = deployment(ns, "r-router-proxy")
		Expect(quietWrites(op, ns, "r")).To(BeEmpty())
		after := deployment(ns, "r-router-proxy")
		Expect(after.ResourceVersion).To(Equal(d.ResourceVersion))
		Expect(after.Generation).To(Equal(d.Generation))
		expectOtherToolsKeys(Default, after)

		By("changing one label, removing another and the annotation")
		editRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Proxy.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "b"}
			r.Spec.Proxy.PodAnnotations = nil
		})
		d = eventuallyDeployment(ns, "r-router-proxy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "b"))
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
			g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey("example.com/owner"))
		})
		expectOtherToolsKeys(Default, d)
		expectRouterSelectors(Default, ns, "r")
		Expect(d.Generation).To(BeNumerically(">", after.Generation), "the template changed")

		By("removing everything")
		editRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) { r.Spec.Proxy = nil })
		d = eventuallyDeployment(ns, "r-router-proxy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("team"))
		})
		expectOtherToolsKeys(Default, d)
		expectRouterSelectors(Default, ns, "r")
		Expect(d.Spec.Template.Labels).To(Equal(map[string]string{
			"app": "r-router-proxy", "inference.llmkube.dev/model-router": "r", "gitops.example.com/tracked": "yes",
		}))

		By("every write went out under the operator's field manager")
		for _, e := range deployment(ns, "r-router-proxy").ManagedFields {
			Expect(e.Manager).NotTo(HavePrefix("llmkube-operator-under-test"), "a write without the field owner")
		}
		for _, e := range getRouter(ns, "r").ManagedFields {
			if e.Subresource == "status" {
				Expect(e.Manager).To(Equal("llmkube-operator"))
				Expect(e.Operation).To(Equal(metav1.ManagedFieldsOperationApply))
			}
		}
	})

	It("changes the ConfigMap and not the proxy's pod template when the routing changes, and nothing on an unrelated reconcile [R9, O5]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "a", nil)
		newRouter(ns, "rt", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", "a")}
		})
		eventuallyConfigMap(ns, "rt-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(fmt.Sprintf("http://a.%s.svc.cluster.local:8080", ns)))
		})
		d0 := eventuallyDeployment(ns, "rt-router-proxy", func(Gomega, *appsv1.Deployment) {})
		Expect(d0.Spec.Template.Annotations).NotTo(HaveKey("inference.llmkube.dev/router-config-hash"))
		Expect(quietWrites(op, ns, "rt")).To(BeEmpty())

		By("a backend is added")
		editRouter(ns, "rt", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, externalBackend("cloud", ""))
		})
		eventuallyConfigMap(ns, "rt-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring("https://api.example.com/v1"))
		})

		By("an InferenceService's endpoint port changes")
		editISVC(ns, "a", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}
		})
		eventuallyConfigMap(ns, "rt-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(fmt.Sprintf("http://a.%s.svc.cluster.local:9000", ns)))
		})
		Eventually(func(g Gomega) {
			r := getRouter(ns, "rt")
			g.Expect(r.Status.Backends).To(ContainElement(inferencev1alpha1.BackendStatus{
				Name: "local", Resolved: true, URL: fmt.Sprintf("http://a.%s.svc.cluster.local:9000", ns)}))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(quietWrites(op, ns, "rt")).To(BeEmpty())
		d := deployment(ns, "rt-router-proxy")
		Expect(d.Generation).To(Equal(d0.Generation), "a routing change rolled the proxy pods (cutting their streams)")
		Expect(d.Spec.Template).To(Equal(d0.Spec.Template))
	})

	It("emits scrape hints on the metrics port, and keeps the user's own prometheus.io keys with emission off", func() {
		op := startOperator(ns, controllers.Config{EmitScrapeAnnotations: true})
		newRouter(ns, "sc", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{PodAnnotations: map[string]string{"prometheus.io/path": "/custom"}}
		})
		eventuallyDeployment(ns, "sc-router-proxy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/port", "9090"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/path", "/custom"), "the user's value wins")
		})

		By("the operator restarts with emission off")
		op.stop()
		startOperator(ns, controllers.Config{EmitScrapeAnnotations: false})
		eventuallyDeployment(ns, "sc-router-proxy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey("prometheus.io/scrape"))
			g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey("prometheus.io/port"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/path", "/custom"))
		})
	})

	It("reports a missing backend per backend, serves the others, and resolves it when it appears [R17]", func() {
		op := startOperator(ns, controllers.Config{})
		newRouter(ns, "mb", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, isvcBackend("local", "later"), externalBackend("keyed", "api-key"))
		})
		expectResolvedRefs := func(status metav1.ConditionStatus, contains ...string) *inferencev1alpha1.ModelRouter {
			var out *inferencev1alpha1.ModelRouter
			Eventually(func(g Gomega) {
				r := getRouter(ns, "mb")
				c := meta.FindStatusCondition(r.Status.Conditions, inferencev1alpha1.ConditionResolvedRefs)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status).To(Equal(status))
				for _, s := range contains {
					g.Expect(c.Message).To(ContainSubstring(s))
				}
				g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation))
				out = r
			}).WithTimeout(20 * time.Second).Should(Succeed())
			return out
		}
		r := expectResolvedRefs(metav1.ConditionFalse, `backend "local"`, `InferenceService "later" not found`, `backend "keyed"`, `Secret "api-key" not found`)
		Expect(r.Status.Backends).To(ConsistOf(
			inferencev1alpha1.BackendStatus{Name: "cloud", Resolved: true, URL: "https://api.example.com/v1"},
			inferencev1alpha1.BackendStatus{Name: "local", Resolved: false, Message: `InferenceService "later" not found`},
			inferencev1alpha1.BackendStatus{Name: "keyed", Resolved: false, Message: `Secret "api-key" not found`},
		))
		Expect(r.Status.Endpoint).To(Equal(fmt.Sprintf("http://mb-router-proxy.%s.svc.cluster.local:8080", ns)))
		cm := eventuallyConfigMap(ns, "mb-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(`"name":"cloud"`))
		})
		Expect(cm.Data["config.json"]).NotTo(ContainSubstring(`"name":"local"`))
		Expect(cm.Data["config.json"]).NotTo(ContainSubstring(`"name":"keyed"`))
		d := eventuallyDeployment(ns, "mb-router-proxy", func(Gomega, *appsv1.Deployment) {})
		Expect(credentialSecrets(d)).To(BeEmpty(), "a missing Secret is not mounted")

		By("a second reconcile sends no write, not even of a status with resolved=false")
		Expect(quietWrites(op, ns, "mb")).To(BeEmpty())

		By("the InferenceService appears: the router resolves it without being touched")
		newISVC(ns, "later", nil)
		expectResolvedRefs(metav1.ConditionFalse, `backend "keyed"`)
		Eventually(func(g Gomega) {
			r := getRouter(ns, "mb")
			c := meta.FindStatusCondition(r.Status.Conditions, inferencev1alpha1.ConditionResolvedRefs)
			g.Expect(c.Message).NotTo(ContainSubstring(`backend "local"`))
			g.Expect(r.Status.Backends).To(ContainElement(inferencev1alpha1.BackendStatus{
				Name: "local", Resolved: true, URL: fmt.Sprintf("http://later.%s.svc.cluster.local:8080", ns)}))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		eventuallyConfigMap(ns, "mb-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(fmt.Sprintf("http://later.%s.svc.cluster.local:8080", ns)))
		})

		By("the Secret appears: the router resolves it and mounts it")
		settle(isvcController, reconciles(isvcController), 0) // nothing else wakes the router from here
		settle(routerController, reconciles(routerController), 0)
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api-key"},
			StringData: map[string]string{"API_KEY": "x"},
		})).To(Succeed())
		r = expectResolvedRefs(metav1.ConditionTrue)
		Expect(r.Status.Backends).To(HaveLen(3))
		for _, b := range r.Status.Backends {
			Expect(b.Resolved).To(BeTrue(), b.Name)
			Expect(b.Message).To(BeEmpty(), b.Name)
		}
		eventuallyDeployment(ns, "mb-router-proxy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(credentialSecrets(d)).To(Equal(map[string]string{"keyed": "api-key"}))
		})
		Expect(quietWrites(op, ns, "mb")).To(BeEmpty())
	})
})
