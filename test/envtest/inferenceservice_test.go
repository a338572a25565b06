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
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

const isvcController = "inferenceservice"

func newISVC(ns, name string, mutate func(*inferencev1alpha1.InferenceService)) *inferencev1alpha1.InferenceService {
	isvc := &inferencev1alpha1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: inferencev1alpha1.InferenceServiceSpec{
			Model:    inferencev1alpha1.ModelSpec{Source: "hf://org/repo/model.gguf"},
			Replicas: ptr.To[int32](1),
		},
	}
	if mutate != nil {
		mutate(isvc)
	}
	Expect(k8sClient.Create(suiteCtx, isvc)).To(Succeed())
	return isvc
}

// editISVC changes the spec as a person would, retrying on conflicts.
func editISVC(ns, name string, change func(*inferencev1alpha1.InferenceService)) {
	edit(ns, name, &inferencev1alpha1.InferenceService{}, change)
}

// touch changes nothing the operator reads but makes it reconcile.
func touch(ns, name string) {
	editISVC(ns, name, func(isvc *inferencev1alpha1.InferenceService) { touched(isvc) })
}

func deployment(ns, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
	return d
}

func eventuallyDeployment(ns, name string, match func(g Gomega, d *appsv1.Deployment)) *appsv1.Deployment {
	return eventually(ns, name, &appsv1.Deployment{}, match)
}

// otherToolsWrite puts keys on the pod template the way other tools do: a GitOps label by Update,
// kubectl rollout restart's restartedAt by merge patch, and a sidecar injector's annotation by apply.
func otherToolsWrite(ns, name string) {
	Eventually(func() error {
		d := deployment(ns, name)
		d.Spec.Template.Labels["gitops.example.com/tracked"] = "yes"
		return k8sClient.Update(suiteCtx, d, client.FieldOwner("argocd-controller"))
	}).Should(Succeed())
	patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-30T10:00:00Z"}}}}}`)
	Expect(k8sClient.Patch(suiteCtx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-rollout"))).To(Succeed())
	sidecar := appsv1ac.Deployment(name, ns).WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithAnnotations(map[string]string{"sidecar.example.com/injected": "true"})))
	Expect(k8sClient.Apply(suiteCtx, sidecar, client.FieldOwner("sidecar-injector"))).To(Succeed())
}

func expectOtherToolsKeys(g Gomega, d *appsv1.Deployment) {
	g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("gitops.example.com/tracked", "yes"))
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("kubectl.kubernetes.io/restartedAt", "2026-11-30T10:00:00Z"))
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("sidecar.example.com/injected", "true"))
}

func expectSelector(g Gomega, d *appsv1.Deployment, name string) {
	g.Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app": name, "inference.llmkube.dev/service": name}))
	g.Expect(d.Spec.Selector.MatchExpressions).To(BeEmpty())
}

var _ = Describe("InferenceService reconciler", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("keeps pod metadata ownership in managedFields through the whole lifecycle [O1, O2, O5]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "foo", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"}
			i.Spec.PodAnnotations = map[string]string{"example.com/owner": "alice"}
		})

		By("O1: the spec's keys reach the pod template")
		d := eventuallyDeployment(ns, "foo", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("example.com/owner", "alice"))
		})
		expectSelector(Default, d, "foo")
		Expect(metav1.IsControlledBy(d, &inferencev1alpha1.InferenceService{ObjectMeta: metav1.ObjectMeta{UID: d.OwnerReferences[0].UID}})).To(BeTrue())
		Expect(d.Labels).To(Equal(map[string]string{"app": "foo", "inference.llmkube.dev/service": "foo", "inference.llmkube.dev/runtime": "llamacpp",
			"app.kubernetes.io/managed-by": "llmkube-operator"}))
		Expect(d.Annotations).NotTo(HaveKey(ContainSubstring("applied-pod")), "no record annotation")
		svc := &corev1.Service{}
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "foo"}, svc)
		}).Should(Succeed())
		Expect(svc.Spec.Selector).To(Equal(map[string]string{"app": "foo", "inference.llmkube.dev/service": "foo"}))

		By("O2: other tools add their keys")
		before := reconciles(isvcController)
		otherToolsWrite(ns, "foo")

		By("O5: an unchanged spec writes nothing")
		settle(isvcController, before, 1) // the other tools' writes woke the operator
		d = deployment(ns, "foo")
		mark := op.mark()
		before = reconciles(isvcController)
		touch(ns, "foo")
		settle(isvcController, before, 1)
		Expect(op.writes(mark)).To(BeEmpty())
		after := deployment(ns, "foo")
		Expect(after.ResourceVersion).To(Equal(d.ResourceVersion))
		Expect(after.Generation).To(Equal(d.Generation))
		expectOtherToolsKeys(Default, after)

		By("O1: removing keys without changing any value removes them from the template")
		editISVC(ns, "foo", func(i *inferencev1alpha1.InferenceService) {
			delete(i.Spec.PodLabels, "tier")
			i.Spec.PodAnnotations = nil
		})
		d = eventuallyDeployment(ns, "foo", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
			g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey("example.com/owner"))
		})
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		expectOtherToolsKeys(Default, d)
		expectSelector(Default, d, "foo")
		Expect(d.Generation).To(BeNumerically(">", after.Generation), "the template changed")
		Expect(d.Annotations).NotTo(HaveKey(ContainSubstring("applied-pod")), "no record annotation")

		By("removing everything")
		editISVC(ns, "foo", func(i *inferencev1alpha1.InferenceService) { i.Spec.PodLabels = nil })
		d = eventuallyDeployment(ns, "foo", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("team"))
		})
		expectOtherToolsKeys(Default, d)
		expectSelector(Default, d, "foo")

		By("every write went out under the operator's field manager")
		for _, e := range deployment(ns, "foo").ManagedFields {
			Expect(e.Manager).NotTo(HavePrefix("llmkube-operator-under-test"), "a write without the field owner")
		}
	})

	It("changes the template when a value changes [O1]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "val", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a"}
		})
		d := eventuallyDeployment(ns, "val", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		})
		editISVC(ns, "val", func(i *inferencev1alpha1.InferenceService) { i.Spec.PodLabels["team"] = "b" })
		d2 := eventuallyDeployment(ns, "val", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "b"))
		})
		Expect(d2.Generation).To(BeNumerically(">", d.Generation))
	})

	It("lets operator labels win and user annotations win, and hands an override back [O3, O4, O7]", func() {
		startOperator(ns, controllers.Config{})
		By("an operator label key is refused at admission, not silently dropped")
		refused := &inferencev1alpha1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prec"},
			Spec: inferencev1alpha1.InferenceServiceSpec{Model: inferencev1alpha1.ModelSpec{Source: "hf://org/repo/model.gguf"},
				PodLabels: map[string]inferencev1alpha1.LabelValue{"inference.llmkube.dev/runtime": "mine"}}}
		Expect(k8sClient.Create(suiteCtx, refused)).To(MatchError(ContainSubstring("spec.podLabels must not set inference.llmkube.dev/runtime")))
		newISVC(ns, "prec", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodAnnotations = map[string]string{"karpenter.sh/do-not-disrupt": "false"}
		})
		eventuallyDeployment(ns, "prec", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("inference.llmkube.dev/runtime", "llamacpp"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("karpenter.sh/do-not-disrupt", "false"))
			expectSelector(g, d, "prec")
		})
		editISVC(ns, "prec", func(i *inferencev1alpha1.InferenceService) { i.Spec.PodAnnotations = nil })
		eventuallyDeployment(ns, "prec", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("karpenter.sh/do-not-disrupt", "true"))
		})
	})

	DescribeTable("emits scrape annotations on the resolved port, and drops only its own when turned off (rules 5 and 6)",
		func(mutate func(*inferencev1alpha1.InferenceService), port string) {
			op := startOperator(ns, controllers.Config{EmitScrapeAnnotations: true})
			newISVC(ns, "scrape", func(i *inferencev1alpha1.InferenceService) {
				mutate(i)
				i.Spec.PodAnnotations = map[string]string{"prometheus.io/path": "/custom"}
			})
			d := eventuallyDeployment(ns, "scrape", func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"))
				g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/port", port))
				g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/path", "/custom"), "the user's value wins")
			})
			c := d.Spec.Template.Spec.Containers[0]
			Expect(c.Ports[0].ContainerPort).To(BeEquivalentTo(mustAtoi(port)))
			if c.ReadinessProbe.HTTPGet != nil {
				Expect(c.ReadinessProbe.HTTPGet.Port.StrVal).To(Equal("http"))
			} else {
				Expect(c.ReadinessProbe.TCPSocket.Port.StrVal).To(Equal("http"), "a runtime without a health path is checked on its port")
			}
			svc := &corev1.Service{}
			Eventually(func() error {
				return k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "scrape"}, svc)
			}).Should(Succeed())
			Expect(svc.Spec.Ports[0].TargetPort.IntValue()).To(Equal(mustAtoi(port)))

			By("another tool sets its own prometheus.io key")
			patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"prometheus.io/scheme":"https"}}}}}`)
			Expect(k8sClient.Patch(suiteCtx, d, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("monitoring-tool"))).To(Succeed())

			By("the operator restarts with emission off")
			op.stop()
			startOperator(ns, controllers.Config{EmitScrapeAnnotations: false})
			eventuallyDeployment(ns, "scrape", func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey("prometheus.io/scrape"))
				g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey("prometheus.io/port"))
				g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/path", "/custom"))
				g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("prometheus.io/scheme", "https"))
			})
		},
		Entry("llamacpp", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = "llamacpp" }, "8080"),
		Entry("vllm", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = "vllm" }, "8000"),
		Entry("tgi", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = "tgi" }, "80"),
		Entry("sglang", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = "sglang" }, "30000"),
		Entry("personaplex", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = "personaplex" }, "8998"),
		Entry("generic", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Runtime = "generic"
			i.Spec.Image = ptr.To("example.com/server:1")
		}, "8080"),
		Entry("containerPort", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Runtime = "vllm"
			i.Spec.ContainerPort = ptr.To[int32](7000)
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}
		}, "7000"),
		Entry("endpoint.port", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Runtime = "vllm"
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}
		}, "9000"),
	)

	It("leaves replicas to the autoscaler once it has written them [O6]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "hpa", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Replicas = nil
			i.Spec.Autoscaling = &inferencev1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 5}
		})
		eventuallyDeployment(ns, "hpa", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
		})
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "hpa"}, hpa)
		}).Should(Succeed())
		Expect(hpa.Spec.MinReplicas).To(HaveValue(BeEquivalentTo(2)))
		Expect(hpa.Spec.MaxReplicas).To(BeEquivalentTo(5))

		By("an HPA-like writer scales through the scale subresource")
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 4}}
		Expect(k8sClient.SubResource("scale").Update(suiteCtx, deployment(ns, "hpa"),
			client.WithSubResourceBody(scale), client.FieldOwner("horizontal-pod-autoscaler"))).To(Succeed())
		Expect(deployment(ns, "hpa").Spec.Replicas).To(HaveValue(BeEquivalentTo(4)))

		mark := op.mark()
		for range 20 {
			before := reconciles(isvcController)
			touch(ns, "hpa")
			Eventually(func() float64 { return reconciles(isvcController) }).Should(BeNumerically(">", before))
		}
		settle(isvcController, reconciles(isvcController), 0)
		Expect(deployment(ns, "hpa").Spec.Replicas).To(HaveValue(BeEquivalentTo(4)))
		Expect(op.writes(mark)).NotTo(ContainElement(ContainSubstring("/deployments/")))

		By("autoscaling removed: the operator takes replicas back and deletes its HPA")
		editISVC(ns, "hpa", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Autoscaling = nil
			i.Spec.Replicas = ptr.To[int32](3)
		})
		eventuallyDeployment(ns, "hpa", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
		})
		Eventually(func() bool {
			return client.IgnoreNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "hpa"}, hpa)) == nil &&
				k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "hpa"}, hpa) != nil
		}).Should(BeTrue())
	})

	It("reports status with server-side apply under the same field manager [O7, O8]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "st", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000), Path: ptr.To("/v1")}
		})
		Eventually(func(g Gomega) {
			isvc := &inferencev1alpha1.InferenceService{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "st"}, isvc)).To(Succeed())
			g.Expect(isvc.Status.ObservedGeneration).To(Equal(isvc.Generation))
			g.Expect(isvc.Status.Endpoint).To(Equal(fmt.Sprintf("http://st.%s.svc.cluster.local:9000/v1", ns)))
			g.Expect(meta.FindStatusCondition(isvc.Status.Conditions, "Ready")).NotTo(BeNil())
			g.Expect(meta.IsStatusConditionFalse(isvc.Status.Conditions, "Degraded")).To(BeTrue())
			g.Expect(isvc.Status.Phase).To(Equal(inferencev1alpha1.PhaseProgressing))
			var managers []string
			for _, e := range isvc.ManagedFields {
				if e.Subresource == "status" {
					managers = append(managers, e.Manager+"/"+string(e.Operation))
				}
			}
			g.Expect(managers).To(ConsistOf("llmkube-operator/Apply"))
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("the Deployment becomes available (a kube-controller-manager stand-in writes its status)")
		d := deployment(ns, "st")
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
		Expect(k8sClient.Status().Update(suiteCtx, d)).To(Succeed())
		Eventually(func(g Gomega) {
			isvc := &inferencev1alpha1.InferenceService{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "st"}, isvc)).To(Succeed())
			g.Expect(isvc.Status.Phase).To(Equal(inferencev1alpha1.PhaseReady))
			g.Expect(isvc.Status.ReadyReplicas).To(BeEquivalentTo(1))
			g.Expect(meta.IsStatusConditionTrue(isvc.Status.Conditions, "Ready")).To(BeTrue())
		}).WithTimeout(20 * time.Second).Should(Succeed())
		By("startup protection stays on the running template: dropping it alone would roll the pods")
		Consistently(func() string {
			return deployment(ns, "st").Spec.Template.Annotations["karpenter.sh/do-not-disrupt"]
		}).WithTimeout(time.Second).Should(Equal("true"))
	})

	It("scales to zero and back without a template change: startup protection alone never rolls the pods [I52]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "zero", nil)
		eventuallyDeployment(ns, "zero", func(Gomega, *appsv1.Deployment) {})
		rolledTo(ns, "zero", 1, 1)
		By("a change that rolls the Ready pods anyway takes startup protection along")
		editISVC(ns, "zero", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"tier": "gold"}
		})
		template := eventuallyDeployment(ns, "zero", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"))
			g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey("karpenter.sh/do-not-disrupt"))
		}).Spec.Template
		rolledTo(ns, "zero", 1, 1)

		for _, replicas := range []int32{0, 1} {
			By(fmt.Sprintf("spec.replicas %d: no pod is Ready, and the template stays as it is", replicas))
			editISVC(ns, "zero", func(i *inferencev1alpha1.InferenceService) { i.Spec.Replicas = ptr.To(replicas) })
			eventuallyDeployment(ns, "zero", func(g Gomega, d *appsv1.Deployment) { g.Expect(*d.Spec.Replicas).To(Equal(replicas)) })
			deploymentStatus(ns, "zero", func(d *appsv1.Deployment) {
				d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas}
			})
			Consistently(func(g Gomega) {
				g.Expect(deployment(ns, "zero").Spec.Template).To(Equal(template), "the pod template changed")
			}).WithTimeout(2 * time.Second).Should(Succeed())
		}
	})

	It("reports an apply the API server rejects as Degraded with a Warning Event, and keeps the running Deployment [F1]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "bad", func(i *inferencev1alpha1.InferenceService) { i.Spec.Image = ptr.To("example.com/good:1") })
		good := eventuallyDeployment(ns, "bad", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("example.com/good:1"))
		})
		// A negative CPU request passes the CRD's quantity schema, but not the Deployment's validation.
		editISVC(ns, "bad", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Image = ptr.To("example.com/bad:1")
			i.Spec.Resources = &inferencev1alpha1.ResourceSpec{CPU: ptr.To(resource.MustParse("-1"))}
		})
		Eventually(func(g Gomega) {
			isvc := &inferencev1alpha1.InferenceService{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "bad"}, isvc)).To(Succeed())
			c := meta.FindStatusCondition(isvc.Status.Conditions, "Degraded")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("must be greater than or equal to 0"))
			g.Expect(isvc.Status.Phase).To(Equal(inferencev1alpha1.PhaseDegraded))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			evs := &eventsv1.EventList{}
			g.Expect(k8sClient.List(suiteCtx, evs, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range evs.Items {
				if e.Type == corev1.EventTypeWarning && e.Regarding.Name == "bad" {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(ContainSubstring("must be greater than or equal to 0")))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		now := deployment(ns, "bad")
		Expect(now.Spec.Template.Spec.Containers[0].Image).To(Equal("example.com/good:1"))
		Expect(now.Generation).To(Equal(good.Generation))
	})
})

func mustAtoi(s string) int {
	var n int
	_, err := fmt.Sscanf(s, "%d", &n)
	Expect(err).NotTo(HaveOccurred())
	return n
}
