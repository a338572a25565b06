/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

// warnings collects the warning headers the API server sends the operator.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

// podSecurityNamespace creates a namespace whose Pod Security admission warns at level.
func podSecurityNamespace(level string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pss-", Labels: map[string]string{
		"pod-security.kubernetes.io/warn":         level,
		"pod-security.kubernetes.io/warn-version": "latest",
	}}}
	Expect(k8sClient.Create(suiteCtx, ns)).To(Succeed())
	DeferCleanup(func() { _ = k8sClient.Delete(suiteCtx, ns) })
	return ns.Name
}

var _ = Describe("Least privilege", func() {
	It("watches only --watch-namespaces: objects elsewhere are never read or written [F6]", func() {
		inside, outside := newNamespace(), newNamespace()
		op := startOperatorWith(operatorOptions{namespaces: []string{inside}})
		newISVC(inside, "in", nil)
		newISVC(outside, "out", nil)
		newRouter(outside, "out", nil)
		eventuallyDeployment(inside, "in", func(g Gomega, d *appsv1.Deployment) {})
		Consistently(func() []string {
			var names []string
			for _, name := range []string{"out", "out-router-proxy"} {
				if k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: outside, Name: name}, &appsv1.Deployment{}) == nil {
					names = append(names, name)
				}
			}
			return names
		}).WithTimeout(2*time.Second).Should(BeEmpty(), "nothing is created outside the watched namespace")
		for _, r := range op.writes(0) {
			Expect(r).NotTo(ContainSubstring("/namespaces/"+outside+"/"), "no write outside")
		}
		op.mu.Lock()
		reqs := append([]string(nil), op.requests...)
		op.mu.Unlock()
		for _, r := range reqs {
			Expect(r).NotTo(ContainSubstring("/namespaces/"+outside+"/"), "no read outside")
			Expect(r).To(Or(ContainSubstring("/namespaces/"+inside+"/"), ContainSubstring("/apis"), ContainSubstring("/api")))
		}
		Expect(reqs).To(ContainElement(MatchRegexp(`^GET /apis/apps/v1/namespaces/`+inside+`/deployments$`)), "the watched namespace is listed")
		Expect(reqs).NotTo(ContainElement(MatchRegexp(`^GET /apis?/([^/]+/)?[^/]+/(deployments|services|configmaps|horizontalpodautoscalers|inferenceservices|modelrouters|secrets)$`)), "no cluster-wide list or watch")
	})

	It("never reads a Secret's data: every Secret request asks for metadata only [F5]", func() {
		ns := newNamespace()
		op := startOperator(ns, controllers.Config{})
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"},
			StringData: map[string]string{"OPENAI_API_KEY": "sk-secret"}})).To(Succeed())
		newRouter(ns, "mr", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{externalBackend("cloud", "creds")}
		})
		Eventually(func(g Gomega) {
			r := getRouter(ns, "mr")
			g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		reads := op.secretReads()
		Expect(reads).NotTo(BeEmpty(), "the router watches Secrets (metadata) to see its credentials appear")
		for _, r := range reads {
			Expect(r).To(HavePrefix("GET "), "only reads")
			Expect(r).To(ContainSubstring("as=PartialObjectMetadata"), "a Secret read that could return data: %s", r)
		}
	})

	Context("Pod Security admission, as a cluster enforces it", func() {
		var w *warnings
		BeforeEach(func() { w = &warnings{} })

		expectNoPodSecurityWarning := func() {
			Expect(w.all()).NotTo(ContainElement(ContainSubstring("PodSecurity")), "the API server warned about the operator's writes")
		}

		It("router-proxy pods satisfy restricted [F7]", func() {
			ns := podSecurityNamespace("restricted")
			startOperatorWith(operatorOptions{namespaces: []string{ns}, warnings: w})
			newRouter(ns, "mr", nil)
			eventuallyDeployment(ns, "mr-router-proxy", func(g Gomega, d *appsv1.Deployment) {})
			settle(routerController, reconciles(routerController), 0)
			expectNoPodSecurityWarning()
		})

		It("inference pods satisfy baseline by default, and the warning capture sees restricted's complaint [F7]", func() {
			ns := podSecurityNamespace("baseline")
			startOperatorWith(operatorOptions{namespaces: []string{ns}, warnings: w})
			newISVC(ns, "llm", nil)
			eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {})
			settle(isvcController, reconciles(isvcController), 0)
			expectNoPodSecurityWarning()

			By("control: the same InferenceService in a restricted namespace is warned about")
			strict := podSecurityNamespace("restricted")
			control := &warnings{}
			startOperatorWith(operatorOptions{namespaces: []string{strict}, warnings: control})
			newISVC(strict, "llm", nil)
			eventuallyDeployment(strict, "llm", func(g Gomega, d *appsv1.Deployment) {})
			Eventually(control.all).Should(ContainElement(ContainSubstring(`would violate PodSecurity "restricted:latest"`)))
		})

		It("inference pods satisfy restricted when the InferenceService asks for non-root [F7]", func() {
			ns := podSecurityNamespace("restricted")
			startOperatorWith(operatorOptions{namespaces: []string{ns}, warnings: w})
			newISVC(ns, "pod-level", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)}
			})
			newISVC(ns, "container-level", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true)}
			})
			for _, name := range []string{"pod-level", "container-level"} {
				eventuallyDeployment(ns, name, func(g Gomega, d *appsv1.Deployment) {})
			}
			settle(isvcController, reconciles(isvcController), 0)
			expectNoPodSecurityWarning()
			for _, warning := range w.all() {
				Expect(strings.ToLower(warning)).NotTo(ContainSubstring("violate"))
			}
		})
	})
})
