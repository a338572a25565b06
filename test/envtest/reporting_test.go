/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

// laggingDeployments is a client of the suite's API server whose Deployment reads answer with
// what read returns, as a cache that has not caught up would; every other call goes to the API
// server, through funcs where they say so.
func laggingDeployments(read func() *appsv1.Deployment, funcs interceptor.Funcs) client.WithWatch {
	funcs.Get = func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if d, ok := obj.(*appsv1.Deployment); ok {
			read().DeepCopyInto(d)
			return nil
		}
		return c.Get(ctx, key, obj, opts...)
	}
	return interceptor.NewClient(watchClient(), funcs)
}

// impersonating binds role (renamed after ns) to a user of the suite's API server and returns a
// config that acts as that user.
func impersonating(ns string, role *rbacv1.ClusterRole) *rest.Config {
	role.ObjectMeta = metav1.ObjectMeta{Name: "role-" + ns}
	Expect(k8sClient.Create(suiteCtx, role)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "role-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "operator-" + ns}},
	}
	Expect(k8sClient.Create(suiteCtx, binding)).To(Succeed())
	DeferCleanup(func() {
		_ = k8sClient.Delete(suiteCtx, binding)
		_ = k8sClient.Delete(suiteCtx, role)
	})
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: "operator-" + ns}
	return as
}

// without drops resource from every rule of role.
func without(role *rbacv1.ClusterRole, resource string) *rbacv1.ClusterRole {
	out := role.DeepCopy()
	for i := range out.Rules {
		var kept []string
		for _, r := range out.Rules[i].Resources {
			if r != resource {
				kept = append(kept, r)
			}
		}
		out.Rules[i].Resources = kept
	}
	out.Rules = slices.DeleteFunc(out.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Resources) == 0 })
	return out
}

var _ = Describe("Failures are named for what they are", func() {
	It("a rollout gate that cannot read EndpointSlices holds the template, converges the rest, and says what failed [W6]", func() {
		ns := newNamespace()
		startOperatorWith(operatorOptions{namespaces: []string{ns}, restConfig: impersonating(ns, without(generatedRole(), "endpointslices"))})
		before := gated(ns, "gate", inferencev1alpha1.RolloutPolicy{}, nil)

		editISVC(ns, "gate", func(i *inferencev1alpha1.InferenceService) {
			delete(i.Spec.PodLabels, "tier")
			i.Spec.Replicas = ptr.To[int32](2)
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}
		})
		Eventually(func(g Gomega) {
			isvc := getISVC(ns, "gate")
			c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionDegraded)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal("RolloutGateFailed"))
			g.Expect(c.Message).To(HavePrefix("Deployment " + ns + "/gate: rollout gate: "))
			g.Expect(c.Message).To(ContainSubstring("endpointslices"))
			g.Expect(c.Message).NotTo(ContainSubstring("rejected by the API server"))
			g.Expect(deployment(ns, "gate").Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
			svc := &corev1.Service{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "gate"}, svc)).To(Succeed())
			g.Expect(svc.Spec.Ports[0].Port).To(BeEquivalentTo(9000))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(deployment(ns, "gate").Spec.Template).To(Equal(before.Spec.Template), "the gate could not decide: the template waits")
	})

	It("never forces a stale cached spec.replicas over the HPA's newer value [O6]", func() {
		ns := newNamespace()
		newISVC(ns, "hpa", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Replicas = nil
			i.Spec.Autoscaling = &inferencev1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 5}
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a"}
		})
		r := &inferenceservice.Reconciler{
			Client:   k8sClient,
			Applier:  ownership.Applier{Client: k8sClient, FieldManager: ownership.DefaultFieldManager},
			Recorder: events.NewFakeRecorder(100),
		}
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "hpa"}}
		_, err := r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		cached := deployment(ns, "hpa")
		Expect(cached.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))

		By("the HPA scales to 4 through the scale subresource; the operator's cache has not seen it")
		scale := &autoscalingv1.Scale{}
		Expect(k8sClient.SubResource("scale").Get(suiteCtx, cached, scale)).To(Succeed())
		scale.Spec.Replicas = 4
		Expect(k8sClient.SubResource("scale").Update(suiteCtx, cached, client.WithSubResourceBody(scale),
			client.FieldOwner("horizontal-pod-autoscaler"))).To(Succeed())
		editISVC(ns, "hpa", func(i *inferencev1alpha1.InferenceService) { i.Spec.PodLabels["team"] = "b" })

		stale := laggingDeployments(func() *appsv1.Deployment { return cached }, interceptor.Funcs{})
		r.Client, r.Applier.Client = stale, stale
		_, _ = r.Reconcile(suiteCtx, req)
		Expect(deployment(ns, "hpa").Spec.Replicas).To(HaveValue(BeEquivalentTo(4)), "a replica count read from a stale cache was forced back")

		By("on a fresh read the HPA owns replicas and the rest lands")
		r.Client, r.Applier.Client = k8sClient, k8sClient
		_, err = r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		d := deployment(ns, "hpa")
		Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(4)))
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "b"))
	})

	It("reports a field taken back once when a second reconcile reads the object as it was before the first one restored it (a lagging cache) [O9]", func() {
		ns := newNamespace()
		newISVC(ns, "lag", nil)
		rec := events.NewFakeRecorder(100)
		r := &inferenceservice.Reconciler{
			Client: k8sClient,
			Applier: ownership.Applier{Client: k8sClient, FieldManager: ownership.DefaultFieldManager, Recorder: rec,
				Written: &ownership.OwnWrites{FieldManager: ownership.DefaultFieldManager}},
			Recorder: rec,
		}
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "lag"}}
		_, err := r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		want := modelImage(deployment(ns, "lag"))

		By("a person force-applies another image; both reconciles below read the Deployment as the person left it")
		hotfix := appsv1ac.Deployment("lag", ns).WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName(inferenceservice.ContainerName).WithImage("registry.example.com/hotfix:1")))))
		Expect(k8sClient.Apply(suiteCtx, hotfix, client.FieldOwner("person"), client.ForceOwnership)).To(Succeed())
		taken := deployment(ns, "lag")
		var applies []string
		stale := laggingDeployments(func() *appsv1.Deployment { return taken }, interceptor.Funcs{
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				if d, ok := obj.(*appsv1ac.DeploymentApplyConfiguration); ok {
					applies = append(applies, "Deployment "+*d.Name)
				}
				return c.Apply(ctx, obj, opts...)
			},
		})
		r.Client, r.Applier.Client = stale, stale
		for range 2 {
			_, err = r.Reconcile(suiteCtx, req)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(modelImage(deployment(ns, "lag"))).To(Equal(want))
		Expect(applies).To(HaveLen(1), "the second reconcile wants what the first sent over the same object: it sends nothing")

		By("a spec change while the read still lags: applied, and the conflict it shows is not reported again")
		editISVC(ns, "lag", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "b"}
		})
		_, err = r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		Expect(applies).To(HaveLen(2))
		Expect(deployment(ns, "lag").Spec.Template.Labels).To(HaveKeyWithValue("team", "b"))
		recorded := func() []string {
			var conflicts []string
			for len(rec.Events) > 0 {
				if e := <-rec.Events; strings.Contains(e, ownership.ReasonOwnershipConflict) {
					conflicts = append(conflicts, e)
				}
			}
			return conflicts
		}
		conflicts := recorded()
		Expect(conflicts).To(HaveLen(1), "one OwnershipConflict Event for one change another manager made: %q", conflicts)
		Expect(conflicts[0]).To(ContainSubstring("now owned by person"))

		By("the person's next change is news: reported again")
		Expect(k8sClient.Apply(suiteCtx, appsv1ac.Deployment("lag", ns).WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName(inferenceservice.ContainerName).WithImage("registry.example.com/hotfix:2"))))),
			client.FieldOwner("person"), client.ForceOwnership)).To(Succeed())
		taken = deployment(ns, "lag")
		_, err = r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		Expect(modelImage(deployment(ns, "lag"))).To(Equal(want))
		Expect(recorded()).To(ConsistOf(ContainSubstring("now owned by person")), "a new change another manager made is reported")
	})

	It("writes a ModelRouter's status once while it converges, from the applied Deployment, with the server's URL as each backend's (spec.endpoint.path is the path LLMKube reports, not a prefix)", func() {
		ns := newNamespace()
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "llm", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Path: ptr.To("/v1")}
		})
		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {})
		settle(isvcController, reconciles(isvcController), 0)
		mark := op.mark()
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", "llm")}
		})
		Eventually(func(g Gomega) {
			r := getRouter(ns, "r")
			g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation))
			g.Expect(r.Status.Backends).To(HaveLen(1))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		settle(routerController, reconciles(routerController), 0)
		r := getRouter(ns, "r")
		var statusWrites []string
		for _, w := range op.writes(mark) {
			if strings.Contains(w, "/modelrouters/r/status") {
				statusWrites = append(statusWrites, w)
			}
		}
		Expect(statusWrites).To(HaveLen(1), "one status write per change")
		Expect(meta.FindStatusCondition(r.Status.Conditions, inferencev1alpha1.ConditionReady).Reason).NotTo(Equal("DeploymentAbsent"))
		// The proxy appends each request's own path (/v1/chat/completions, /v1/embeddings), so the
		// backend is the server, not status.endpoint (LLMKube's schema defaults the path to
		// /v1/chat/completions; appending to it would double the path).
		Expect(r.Status.Backends[0].URL).To(Equal(inferenceservice.BaseURL(getISVC(ns, "llm"))))
		Expect(r.Status.Backends[0].URL).NotTo(HaveSuffix("/v1"))
	})
})
