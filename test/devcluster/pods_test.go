/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster_test

import (
	"context"
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/internal/devcluster"
)

// The user applies as kubectl does (`kubectl apply --server-side`); another tool applies under a
// manager of its own.
const (
	userManager  = "kubectl"
	otherManager = "other-tool"
	otherLabel   = "tool.example.com/injected"
)

func newNamespace(name string) string {
	Expect(k8sClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// applyISVC applies an InferenceService as the user, with podLabels and extra spec fields.
func applyISVC(ns, name string, podLabels map[string]any, extra map[string]any) {
	spec := map[string]any{
		"runtime":   "llamacpp",
		"model":     map[string]any{"source": "hf://TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF/tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf"},
		"replicas":  int64(1),
		"resources": map[string]any{"cpu": "1", "memory": "1Gi"},
	}
	if podLabels != nil {
		spec["podLabels"] = podLabels
	}
	for k, v := range extra {
		spec[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "inference.llmkube.dev/v1alpha1", "kind": "InferenceService",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	Expect(k8sClient.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(userManager), client.ForceOwnership)).To(Succeed())
}

// pods are the InferenceService's pods that exist and are not being deleted.
func pods(g Gomega, ns, name string) []corev1.Pod {
	list := &corev1.PodList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels(inferenceservice.SelectorLabels(name)))).To(Succeed())
	return list.Items
}

func runningAndReady(p corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// settled waits until the InferenceService runs exactly one pod, Running and Ready on a fake node,
// that satisfies match, reports READY 1/1, and no other pod is left; it returns that pod.
func settled(ns, name string, match func(g Gomega, p corev1.Pod)) corev1.Pod {
	var only corev1.Pod
	Eventually(func(g Gomega) {
		ps := pods(g, ns, name)
		g.Expect(ps).To(HaveLen(1), "one pod, the old ones gone")
		g.Expect(runningAndReady(ps[0])).To(BeTrue(), "pod %s Running and Ready: %+v", ps[0].Name, ps[0].Status)
		match(g, ps[0])
		isvc := &inferencev1alpha1.InferenceService{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, isvc)).To(Succeed())
		g.Expect(isvc.Status.Ready).To(Equal("1/1"))
		only = ps[0]
	}).Should(Succeed())
	return only
}

// servedBy waits until the Service's EndpointSlice, written by the real endpointslice controller,
// lists pod as its one Ready endpoint. The controller follows a pod's readiness with a delay, so
// a pod that settled is not yet served, nor counted by the rollout gate.
func servedBy(ns, service string, pod corev1.Pod) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		slices := &discoveryv1.EndpointSliceList{}
		g.Expect(k8sClient.List(context.Background(), slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: service})).To(Succeed())
		g.Expect(slices.Items).NotTo(BeEmpty())
		s := slices.Items[0]
		g.Expect(s.Labels[discoveryv1.LabelManagedBy]).To(Equal("endpointslice-controller.k8s.io"))
		g.Expect(s.Endpoints).To(HaveLen(1))
		g.Expect(s.Endpoints[0].TargetRef.Name).To(Equal(pod.Name))
		g.Expect(*s.Endpoints[0].Conditions.Ready).To(BeTrue())
	}).Should(Succeed())
}

// replicaSets are the Deployment's ReplicaSets by revision.
func replicaSets(g Gomega, ns, name string) map[int]appsv1.ReplicaSet {
	list := &appsv1.ReplicaSetList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels(inferenceservice.SelectorLabels(name)))).To(Succeed())
	out := map[int]appsv1.ReplicaSet{}
	for _, rs := range list.Items {
		rev, err := strconv.Atoi(rs.Annotations["deployment.kubernetes.io/revision"])
		g.Expect(err).NotTo(HaveOccurred())
		out[rev] = rs
	}
	return out
}

// currentRevision checks that pod belongs to the newest ReplicaSet and every older one is scaled
// to zero: a spec change went through a real rollout. It returns the newest revision.
func currentRevision(ns, name string, pod corev1.Pod) int {
	var newest int
	Eventually(func(g Gomega) {
		rss := replicaSets(g, ns, name)
		newest = 0
		for rev := range rss {
			newest = max(newest, rev)
		}
		for rev, rs := range rss {
			if rev != newest {
				g.Expect(*rs.Spec.Replicas).To(BeZero(), "old ReplicaSet %s (revision %d) scaled down", rs.Name, rev)
			}
		}
		g.Expect(pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]).To(Equal(rss[newest].Labels[appsv1.DefaultDeploymentUniqueLabelKey]), "the pod is the newest ReplicaSet's")
		g.Expect(metav1.IsControlledBy(&pod, new(rss[newest]))).To(BeTrue())
	}).Should(Succeed())
	return newest
}

var _ = Describe("the promise on pods, in the dev cluster", func() {
	It("adds a podLabel to the pods, removes it from new pods while the old go, keeps another tool's template label, through real ReplicaSet rollouts [D1, O1, O2]", func() {
		ns := newNamespace("pods-promise")
		const name = "tiny"

		By("a first apply: a pod runs, READY 1/1, the Service's EndpointSlice comes from the real controller")
		applyISVC(ns, name, nil, nil)
		first := settled(ns, name, func(g Gomega, p corev1.Pod) { g.Expect(p.Labels).NotTo(HaveKey("team")) })
		rev1 := currentRevision(ns, name, first)
		servedBy(ns, name, first)

		By("adding podLabels team=research: a new ReplicaSet's pod carries it, the old pod is gone")
		applyISVC(ns, name, map[string]any{"team": "research"}, nil)
		labelled := settled(ns, name, func(g Gomega, p corev1.Pod) { g.Expect(p.Labels).To(HaveKeyWithValue("team", "research")) })
		Expect(labelled.Name).NotTo(Equal(first.Name))
		rev2 := currentRevision(ns, name, labelled)
		Expect(rev2).To(BeNumerically(">", rev1))

		By("another tool labels the pod template under its own field manager")
		other := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{otherLabel: "yes"}}}},
		}}
		Expect(k8sClient.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(other), client.FieldOwner(otherManager))).To(Succeed())
		tooled := settled(ns, name, func(g Gomega, p corev1.Pod) {
			g.Expect(p.Labels).To(HaveKeyWithValue(otherLabel, "yes"))
			g.Expect(p.Labels).To(HaveKeyWithValue("team", "research"))
		})
		rev3 := currentRevision(ns, name, tooled)

		By("removing team from podLabels: the new pod comes without it, keeps the other tool's label, the old pods are gone")
		applyISVC(ns, name, nil, nil)
		last := settled(ns, name, func(g Gomega, p corev1.Pod) {
			g.Expect(p.Labels).NotTo(HaveKey("team"))
			g.Expect(p.Labels).To(HaveKeyWithValue(otherLabel, "yes"))
		})
		for _, old := range []corev1.Pod{first, labelled, tooled} {
			Expect(last.Name).NotTo(Equal(old.Name))
		}
		Expect(currentRevision(ns, name, last)).To(BeNumerically(">", rev3))
		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, dep)).To(Succeed())
		Expect(dep.Spec.Template.Labels).NotTo(HaveKey("team"))
		Expect(dep.Spec.Template.Labels).To(HaveKeyWithValue(otherLabel, "yes"))
	})

	It("binds the model cache claim, schedules the pod with it, and names a pod whose metrics cannot be read in RolloutDeferred and an Event [D1, W4]", func() {
		ns := newNamespace("gate-on-kwok")
		const name = "cached"
		extra := map[string]any{
			"modelCache":    map[string]any{"persistence": "Cached", "size": "1Gi"},
			"rolloutPolicy": map[string]any{"waitForIdle": true},
		}
		applyISVC(ns, name, nil, extra)
		pod := settled(ns, name, func(Gomega, corev1.Pod) {})
		// The gate counts the pods the Service's EndpointSlices list Ready: a template change
		// sent before the slice controller has listed the pod finds none to wait for, and rolls.
		servedBy(ns, name, pod)
		pvc := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: inferenceservice.CacheClaimName(fresh(ns, name))}, pvc)).To(Succeed())
		Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		Expect(ptrString(pvc.Spec.StorageClassName)).To(Equal(devcluster.StorageClassName))

		By("a template change waits: nothing answers behind the KWOK pod's address, and the pod is named")
		applyISVC(ns, name, map[string]any{"team": "research"}, extra)
		Eventually(func(g Gomega) {
			isvc := fresh(ns, name)
			c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionRolloutDeferred)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf("pod %s (", pod.Name)))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			events := &eventsv1.EventList{}
			g.Expect(k8sClient.List(context.Background(), events, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range events.Items {
				if e.Reason == inferenceservice.ReasonMetricsUnreadable && e.Regarding.Name == name {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(ContainSubstring(fmt.Sprintf("pod %s (", pod.Name))))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			ps := pods(g, ns, name)
			g.Expect(ps).To(HaveLen(1))
			g.Expect(ps[0].Name).To(Equal(pod.Name))
		}, "3s").Should(Succeed(), "the gate holds the roll")
	})
})

func fresh(ns, name string) *inferencev1alpha1.InferenceService {
	isvc := &inferencev1alpha1.InferenceService{}
	Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, isvc)).To(Succeed())
	return isvc
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
