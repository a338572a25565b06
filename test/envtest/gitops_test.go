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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

// isvcManifest is what a Git repository holds for an InferenceService, with the podLabels given.
func isvcManifest(ns, name string, podLabels map[string]string) string {
	var labels strings.Builder
	for _, k := range []string{"team", "tier", "cost-center"} {
		if v, ok := podLabels[k]; ok {
			fmt.Fprintf(&labels, "    %s: %s\n", k, v)
		}
	}
	return fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: %s
  namespace: %s
spec:
  runtime: llamacpp
  model:
    source: hf://org/repo/model.gguf
  replicas: 1
  env:
  - name: LOG_FORMAT
    value: json
  podLabels:
%s`, name, ns, labels.String())
}

func getISVC(ns, name string) *inferencev1alpha1.InferenceService {
	isvc := &inferencev1alpha1.InferenceService{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, isvc)).To(Succeed())
	return isvc
}

// eventuallyStatus waits for the operator's status of the current generation.
func eventuallyStatus(ns, name string) *inferencev1alpha1.InferenceService {
	var out *inferencev1alpha1.InferenceService
	Eventually(func(g Gomega) {
		isvc := &inferencev1alpha1.InferenceService{}
		g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, isvc)).To(Succeed())
		ready := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.ObservedGeneration).To(Equal(isvc.Generation))
		out = isvc
	}).WithTimeout(20 * time.Second).Should(Succeed())
	return out
}

// conflictEvents lists the OwnershipConflict Events recorded in ns.
func conflictEvents(ns string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	Expect(k8sClient.List(suiteCtx, list, client.InNamespace(ns))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Reason == ownership.ReasonOwnershipConflict {
			out = append(out, e)
		}
	}
	return out
}

func managersOf(obj client.Object, subresource string) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		if e.Subresource == subresource {
			out = append(out, e.Manager)
		}
	}
	return out
}

func modelImage(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == inferenceservice.ContainerName {
			return c.Image
		}
	}
	return ""
}

var _ = Describe("GitOps with kubectl apply --server-side", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	for _, tool := range []string{"argocd-controller", "kustomize-controller"} {
		It("[GO1] shares the InferenceService with "+tool+": no conflicts, re-apply is a no-op, a removed podLabel leaves the pods", func() {
			startOperator(ns, controllers.Config{})
			manifest := isvcManifest(ns, "llm", map[string]string{"team": "research", "tier": "gold"})
			out, err := applyAs(tool, manifest)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(ContainSubstring("serverside-applied"))

			eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"))
			})
			before := eventuallyStatus(ns, "llm")
			Expect(managersOf(before, "")).To(ConsistOf(tool), "only the GitOps tool owns the main resource")
			Expect(managersOf(before, "status")).To(ConsistOf(ownership.DefaultFieldManager), "only the operator owns status")
			settle(isvcController, reconciles(isvcController), 0)
			before = getISVC(ns, "llm")

			By("re-applying the same manifest changes nothing, and never reverts status")
			_, err = applyAs(tool, manifest) // no --force-conflicts: a conflict would fail here
			Expect(err).NotTo(HaveOccurred())
			after := getISVC(ns, "llm")
			Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "re-apply of the same manifest wrote")
			Expect(after.Status).To(Equal(before.Status))

			By("removing a podLabels key from the manifest and re-applying removes it from the pod template")
			_, err = applyAs(tool, isvcManifest(ns, "llm", map[string]string{"team": "research"}))
			Expect(err).NotTo(HaveOccurred())
			eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
				g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "research"))
			})
			got := eventuallyStatus(ns, "llm")
			Expect(got.Spec.PodLabels).NotTo(HaveKey("tier"))
			// Status writes by the operator and applies by the tool never met.
			_, err = applyAs(tool, isvcManifest(ns, "llm", map[string]string{"team": "research"}))
			Expect(err).NotTo(HaveOccurred())
			Expect(conflictEvents(ns)).To(BeEmpty())
		})
	}

	It("keeps a GitOps tool's tracking label and annotation on the operator's Deployment without reporting a conflict [GO2, O2]", func() {
		startOperator(ns, controllers.Config{})
		_, err := applyAs("argocd-controller", isvcManifest(ns, "llm", map[string]string{"team": "research"}))
		Expect(err).NotTo(HaveOccurred())
		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {})

		tracking := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  namespace: %s
  labels:
    argocd.argoproj.io/instance: llm-app
  annotations:
    argocd.argoproj.io/tracking-id: llm-app:apps/Deployment:%s/llm
`, ns, ns)
		_, err = applyAs("argocd-controller", tracking)
		Expect(err).NotTo(HaveOccurred(), "the tracking label must not conflict with the operator")

		By("the operator reconciles a change to the Deployment and the tracking metadata stays")
		_, err = applyAs("argocd-controller", isvcManifest(ns, "llm", map[string]string{"team": "research", "tier": "gold"}))
		Expect(err).NotTo(HaveOccurred())
		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"))
		})
		settle(isvcController, reconciles(isvcController), 0)
		d := deployment(ns, "llm")
		Expect(d.Labels).To(HaveKeyWithValue("argocd.argoproj.io/instance", "llm-app"))
		Expect(d.Annotations).To(HaveKeyWithValue("argocd.argoproj.io/tracking-id", "llm-app:apps/Deployment:"+ns+"/llm"))
		Expect(conflictEvents(ns)).To(BeEmpty())
		// Argo CD's own re-apply of the tracking metadata never conflicts either.
		_, err = applyAs("argocd-controller", tracking)
		Expect(err).NotTo(HaveOccurred())
	})

	It("restores an operator-owned field a person changed and records an Event naming the field and the manager [O9]", func() {
		startOperator(ns, controllers.Config{})
		_, err := applyAs("argocd-controller", isvcManifest(ns, "llm", map[string]string{"team": "research"}))
		Expect(err).NotTo(HaveOccurred())
		want := modelImage(eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {}))
		Expect(want).NotTo(BeEmpty())

		By("a conflicting apply by a person, forced")
		person := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  namespace: %s
spec:
  template:
    spec:
      containers:
      - name: %s
        image: registry.example.com/hotfix:1
`, ns, inferenceservice.ContainerName)
		_, err = applyAs("person", person)
		Expect(err).To(HaveOccurred(), "without --force-conflicts the operator's field is a conflict")
		Expect(err.Error()).To(ContainSubstring(ownership.DefaultFieldManager))
		_, err = applyAs("person", person, "--force-conflicts")
		Expect(err).NotTo(HaveOccurred())

		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(modelImage(d)).To(Equal(want))
		})
		path := fmt.Sprintf(`.spec.template.spec.containers[name="%s"].image`, inferenceservice.ContainerName)
		Eventually(func(g Gomega) {
			events := conflictEvents(ns)
			g.Expect(events).To(HaveLen(1))
			g.Expect(events[0].Type).To(Equal(corev1.EventTypeWarning))
			g.Expect(events[0].Regarding.Kind).To(Equal("InferenceService"))
			g.Expect(events[0].Note).To(ContainSubstring(path))
			g.Expect(events[0].Note).To(ContainSubstring("person"))
		}).WithTimeout(10 * time.Second).Should(Succeed())

		By("a kubectl edit-style Update")
		Eventually(func() error {
			d := deployment(ns, "llm")
			for i := range d.Spec.Template.Spec.Containers {
				d.Spec.Template.Spec.Containers[i].Image = "registry.example.com/edited:2"
			}
			return k8sClient.Update(suiteCtx, d, client.FieldOwner("kubectl-edit"))
		}).Should(Succeed())
		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(modelImage(d)).To(Equal(want))
		})
		Eventually(func(g Gomega) {
			var notes []string
			for _, e := range conflictEvents(ns) {
				notes = append(notes, e.Note)
			}
			g.Expect(notes).To(ContainElement(And(ContainSubstring(path), ContainSubstring("kubectl-edit (Update)"))))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("merges list-typed fields applied by two managers by key [O10]", func() {
		startOperator(ns, controllers.Config{})
		_, err := applyAs("argocd-controller", isvcManifest(ns, "llm", map[string]string{"team": "research"})+`  imagePullSecrets:
  - name: from-git
`)
		Expect(err).NotTo(HaveOccurred())
		_, err = applyAs("platform-team", fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: llm
  namespace: %s
spec:
  env:
  - name: HTTP_PROXY
    value: http://proxy:3128
  imagePullSecrets:
  - name: from-platform
`, ns))
		Expect(err).NotTo(HaveOccurred(), "entries with other keys never conflict")
		isvc := getISVC(ns, "llm")
		Expect(isvc.Spec.Env).To(ConsistOf(
			corev1.EnvVar{Name: "LOG_FORMAT", Value: "json"},
			corev1.EnvVar{Name: "HTTP_PROXY", Value: "http://proxy:3128"}))
		Expect(isvc.Spec.ImagePullSecrets).To(ConsistOf(
			inferencev1alpha1.LocalObjectReference{Name: "from-git"},
			inferencev1alpha1.LocalObjectReference{Name: "from-platform"}))
		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
			var names []string
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				names = append(names, e.Name)
			}
			g.Expect(names).To(ContainElements("LOG_FORMAT", "HTTP_PROXY"))
			g.Expect(d.Spec.Template.Spec.ImagePullSecrets).To(ConsistOf(
				corev1.LocalObjectReference{Name: "from-git"}, corev1.LocalObjectReference{Name: "from-platform"}))
		})

		By("the same key from the second manager is a conflict, not a silent overwrite")
		_, err = applyAs("platform-team", fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: llm
  namespace: %s
spec:
  env:
  - name: LOG_FORMAT
    value: text
`, ns))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("argocd-controller"))

		By("a ModelRouter's backends, by name")
		_, err = applyAs("argocd-controller", fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata:
  name: router
  namespace: %s
spec:
  backends:
  - name: llm
    inferenceServiceRef:
      name: llm
  defaultRoute: llm
`, ns))
		Expect(err).NotTo(HaveOccurred())
		_, err = applyAs("platform-team", fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata:
  name: router
  namespace: %s
spec:
  backends:
  - name: openai
    external:
      provider: openai
      url: https://api.openai.com/v1
`, ns))
		Expect(err).NotTo(HaveOccurred())
		mr := &inferencev1alpha1.ModelRouter{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "router"}, mr)).To(Succeed())
		var backends []string
		for _, b := range mr.Spec.Backends {
			backends = append(backends, b.Name)
		}
		Expect(backends).To(ConsistOf("llm", "openai"))
	})
})
