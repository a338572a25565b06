/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/rollout"
)

// runtimePod stands in for one runtime pod: it serves /metrics with the in-flight gauge the test
// sets.
type runtimePod struct {
	server   *httptest.Server
	inFlight atomic.Int64
	metric   string
}

func newRuntimePod(metric string, inFlight int64) *runtimePod {
	p := &runtimePod{metric: metric}
	p.inFlight.Store(inFlight)
	p.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE %s gauge\n%s{slot=\"0\"} %d\n", p.metric, p.metric, p.inFlight.Load())
	}))
	DeferCleanup(p.server.Close)
	return p
}

func (p *runtimePod) port() int32 {
	_, port, err := net.SplitHostPort(p.server.Listener.Addr().String())
	Expect(err).NotTo(HaveOccurred())
	n, err := strconv.Atoi(port)
	Expect(err).NotTo(HaveOccurred())
	return int32(n)
}

// endpointSlice puts one ready endpoint behind the Service, as the EndpointSlice controller would
// for a ready pod; podNetwork routes its TEST-NET address to the stand-in on 127.0.0.1:port.
func endpointSlice(ns, service string, port int32) {
	Expect(k8sClient.Create(suiteCtx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, GenerateName: service + "-", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.10"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	})).To(Succeed())
}

func rolloutDeferred(ns, name string) *metav1.Condition {
	isvc := &inferencev1alpha1.InferenceService{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, isvc)).To(Succeed())
	return meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionRolloutDeferred)
}

// gated creates an InferenceService with waitForIdle and two labels, and waits for its Deployment.
func gated(ns, name string, policy inferencev1alpha1.RolloutPolicy, mutate func(*inferencev1alpha1.InferenceService)) *appsv1.Deployment {
	policy.WaitForIdle = ptr.To(true)
	newISVC(ns, name, func(i *inferencev1alpha1.InferenceService) {
		i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"}
		i.Spec.RolloutPolicy = &policy
		if mutate != nil {
			mutate(i)
		}
	})
	return eventuallyDeployment(ns, name, func(g Gomega, d *appsv1.Deployment) {
		g.Expect(d.Spec.Template.Labels).To(HaveKey("tier"))
	})
}

func removeTier(ns, name string) {
	editISVC(ns, name, func(i *inferencev1alpha1.InferenceService) { delete(i.Spec.PodLabels, "tier") })
}

var _ = Describe("Rollout gate and the migration shim", func() {
	It("gates the migration's first pruning apply [W7, U8]", func() {
		ns := newNamespace()
		newISVC(ns, "up", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"}
		})
		legacyReconcile(ns, "up", true)
		editISVC(ns, "up", func(i *inferencev1alpha1.InferenceService) {
			delete(i.Spec.PodLabels, "tier")
			i.Spec.RolloutPolicy = &inferencev1alpha1.RolloutPolicy{WaitForIdle: ptr.To(true)}
		})
		pod := newRuntimePod("llamacpp:requests_processing", 1)
		endpointSlice(ns, "up", pod.port())

		startOperator(ns, controllers.Config{})
		Eventually(func(g Gomega) {
			c := rolloutDeferred(ns, "up")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(rollout.ReasonWaitingForIdle))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		d := deployment(ns, "up")
		Expect(d.Annotations).NotTo(HaveKey("inference.llmkube.dev/applied-pod-labels"), "the migration itself is not gated")
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"), "its pruning apply is")

		pod.inFlight.Store(0)
		eventuallyDeployment(ns, "up", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
	})
})

var _ = Describe("Rollout gate", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		startOperator(ns, controllers.Config{})
	})

	It("defers a pure key removal while a pod is busy, converges the rest, and rolls once when idle [W1, O15]", func() {
		before := gated(ns, "busy", inferencev1alpha1.RolloutPolicy{}, nil)
		pod := newRuntimePod("llamacpp:requests_processing", 2)
		endpointSlice(ns, "busy", pod.port())

		By("a busy pod: the key removal waits, replicas and the Service still change")
		editISVC(ns, "busy", func(i *inferencev1alpha1.InferenceService) {
			delete(i.Spec.PodLabels, "tier")
			i.Spec.Replicas = ptr.To[int32](2)
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}
		})
		Eventually(func(g Gomega) {
			c := rolloutDeferred(ns, "busy")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(rollout.ReasonWaitingForIdle))
			g.Expect(c.Message).To(ContainSubstring("1 of 1 pods busy"))
			// kstatus: the new generation is not current before its template rolled out.
			isvc := getISVC(ns, "busy")
			g.Expect(isvc.Status.ObservedGeneration).To(BeNumerically("<", isvc.Generation), "status.observedGeneration while deferred")
			g.Expect(meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionReady).ObservedGeneration).
				To(BeNumerically("<", isvc.Generation), "Ready's observedGeneration while deferred")
			d := deployment(ns, "busy")
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
			svc := &corev1.Service{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "busy"}, svc)).To(Succeed())
			g.Expect(svc.Spec.Ports[0].Port).To(BeEquivalentTo(9000))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		deferred := deployment(ns, "busy")
		Expect(deferred.Spec.Template).To(Equal(before.Spec.Template), "the template must not change while the pod is busy")
		Consistently(func() corev1.PodTemplateSpec { return deployment(ns, "busy").Spec.Template }).
			WithTimeout(2 * time.Second).Should(Equal(before.Spec.Template))

		By("the pod goes idle: the template changes, once, and the condition clears")
		pod.inFlight.Store(0)
		d := eventuallyDeployment(ns, "busy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		Expect(d.Generation).To(Equal(deferred.Generation + 1))
		Eventually(func() *metav1.Condition { return rolloutDeferred(ns, "busy") }).WithTimeout(10 * time.Second).Should(BeNil())
		eventually(ns, "busy", &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
			g.Expect(i.Status.ObservedGeneration).To(Equal(i.Generation))
			g.Expect(meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionReady).ObservedGeneration).To(Equal(i.Generation))
		})
		settle(isvcController, reconciles(isvcController), 0)
		Expect(deployment(ns, "busy").Generation).To(Equal(d.Generation))
	})

	It("keeps waiting after idleTimeoutSeconds without force, and says so [W3]", func() {
		before := gated(ns, "noforce", inferencev1alpha1.RolloutPolicy{IdleTimeoutSeconds: ptr.To[int32](1)}, nil)
		endpointSlice(ns, "noforce", newRuntimePod("llamacpp:requests_processing", 1).port())
		removeTier(ns, "noforce")
		Eventually(func(g Gomega) {
			c := rolloutDeferred(ns, "noforce")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(rollout.ReasonIdleTimeoutNotForced))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(deployment(ns, "noforce").Spec.Template).To(Equal(before.Spec.Template))
	})

	It("rolls a busy runtime once idleTimeoutSeconds has passed with force [W3]", func() {
		gated(ns, "force", inferencev1alpha1.RolloutPolicy{IdleTimeoutSeconds: ptr.To[int32](1), Force: ptr.To(true)}, nil)
		endpointSlice(ns, "force", newRuntimePod("llamacpp:requests_processing", 1).port())
		removeTier(ns, "force")
		eventuallyDeployment(ns, "force", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
		Eventually(func() *metav1.Condition { return rolloutDeferred(ns, "force") }).WithTimeout(10 * time.Second).Should(BeNil())
	})

	It("counts an unreachable endpoint as busy [W4]", func() {
		before := gated(ns, "gone", inferencev1alpha1.RolloutPolicy{}, nil)
		closed := newRuntimePod("llamacpp:requests_processing", 0)
		port := closed.port()
		closed.server.Close()
		endpointSlice(ns, "gone", port)
		removeTier(ns, "gone")
		Eventually(func(g Gomega) {
			c := rolloutDeferred(ns, "gone")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("1 of 1 pods busy"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(deployment(ns, "gone").Spec.Template).To(Equal(before.Spec.Template))
	})

	It("does not gate another tool's template change, nor report one [W2]", func() {
		gated(ns, "restart", inferencev1alpha1.RolloutPolicy{}, nil)
		endpointSlice(ns, "restart", newRuntimePod("llamacpp:requests_processing", 3).port())
		before := reconciles(isvcController)
		patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-30T12:00:00Z"}}}}}`)
		Expect(k8sClient.Patch(suiteCtx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restart"}},
			client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-rollout"))).To(Succeed())
		settle(isvcController, before, 1)
		Expect(rolloutDeferred(ns, "restart")).To(BeNil())
		Expect(deployment(ns, "restart").Spec.Template.Annotations).To(HaveKeyWithValue("kubectl.kubernetes.io/restartedAt", "2026-11-30T12:00:00Z"))
	})

	It("reports a runtime without an in-flight gauge, and rolls it only with force [W5]", func() {
		before := gated(ns, "generic", inferencev1alpha1.RolloutPolicy{}, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Runtime = "generic"
			i.Spec.Image = ptr.To("example.com/server:1")
		})
		removeTier(ns, "generic")
		Eventually(func(g Gomega) {
			c := rolloutDeferred(ns, "generic")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(rollout.ReasonIdleDetectionUnsupported))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(deployment(ns, "generic").Spec.Template).To(Equal(before.Spec.Template))
		editISVC(ns, "generic", func(i *inferencev1alpha1.InferenceService) { i.Spec.RolloutPolicy.Force = ptr.To(true) })
		eventuallyDeployment(ns, "generic", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
	})
})
