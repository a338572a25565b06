/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

var _ = Describe("Creating an object", func() {
	It("never adopts a user's object created between the operator's read and its create [O19, O11]", func() {
		ns := newNamespace()
		newISVC(ns, "race", nil)
		users := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "race", Labels: map[string]string{"team": "other"}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "unrelated-app"},
				Ports: []corev1.ServicePort{{Name: "web", Port: 80}}},
		}
		var raced bool
		// The operator's cache has no Service of that name; the user's create lands right before
		// the operator's create of it reaches the API server.
		racing := interceptor.NewClient(watchClient(), interceptor.Funcs{
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				// The first apply of the Service is its create, however the create is sent.
				if _, ok := obj.(*corev1ac.ServiceApplyConfiguration); ok && !raced {
					raced = true
					Expect(k8sClient.Create(ctx, users.DeepCopy())).To(Succeed())
				}
				return c.Apply(ctx, obj, opts...)
			},
		})
		rec := events.NewFakeRecorder(100)
		r := &inferenceservice.Reconciler{
			Client:   k8sClient,
			Applier:  ownership.Applier{Client: racing, FieldManager: ownership.DefaultFieldManager, Recorder: rec, Reader: k8sClient},
			Recorder: rec,
		}
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "race"}}
		_, _ = r.Reconcile(suiteCtx, req)
		Expect(raced).To(BeTrue())

		got := &corev1.Service{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(users), got)).To(Succeed())
		Expect(got.OwnerReferences).To(BeEmpty(), "the user's Service was adopted")
		Expect(got.Spec.Selector).To(Equal(users.Spec.Selector))
		Expect(managersOf(got, "")).NotTo(ContainElement(ownership.DefaultFieldManager))

		By("the next reconcile reads it and refuses it by identity")
		_, _ = r.Reconcile(suiteCtx, req)
		Expect(getISVC(ns, "race").Status.Conditions).To(ContainElement(And(
			HaveField("Type", inferencev1alpha1.ConditionDegraded), HaveField("Reason", "NotControlled"))))
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(users), got)).To(Succeed())
		Expect(got.OwnerReferences).To(BeEmpty())
	})

	It("leaves the object as an apply would have created it, for one request per object [O19, O5]", func() {
		ns := newNamespace()
		op := startOperator(ns, controllers.Config{})
		mark := op.mark()
		newISVC(ns, "m", nil)
		eventually(ns, "m", &corev1.Service{}, func(Gomega, *corev1.Service) {})
		settle(isvcController, reconciles(isvcController), 0)
		counts := map[string]int{}
		for _, req := range op.requestsSince(mark) {
			for _, kind := range []string{"deployments", "services"} {
				// Not the caches' lists, which the manager sends once when it starts.
				if strings.HasPrefix(req, "POST ") && strings.HasSuffix(req, "/"+kind) || strings.HasSuffix(req, "/"+kind+"/m") {
					counts[strings.Fields(req)[0]+" "+kind]++
				}
			}
		}
		GinkgoWriter.Printf("requests to create an InferenceService's Deployment and Service: %v\n", counts)
		// No read: whether a workload of that name exists decides what the plan applies at all, and
		// neither the operator's cache nor the cache of the names it leaves out
		// (ownership.ForeignNames) holds one, so the plan knows without asking.
		Expect(counts).To(Equal(map[string]int{"PATCH deployments": 1, "PATCH services": 1}))
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
			Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, obj)).To(Succeed())
			var entries []string
			for _, e := range obj.GetManagedFields() {
				entries = append(entries, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
			}
			Expect(entries).To(ConsistOf("llmkube-operator/Apply/"), "%T", obj)
		}

		By("a reconcile with nothing new sends nothing, and a removed key leaves")
		mark = op.mark()
		touch(ns, "m")
		settle(isvcController, reconciles(isvcController), 0)
		Expect(op.writes(mark)).To(BeEmpty())
		editISVC(ns, "m", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a"}
		})
		eventuallyDeployment(ns, "m", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		})
		editISVC(ns, "m", func(i *inferencev1alpha1.InferenceService) { i.Spec.PodLabels = nil })
		eventuallyDeployment(ns, "m", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("team"))
		})
	})

	It("says 'must not exist' with an apply pinned to resourceVersion 1: it creates a missing object and is refused, changing nothing, on an existing one [O19]", func() {
		ns := newNamespace()
		withUID := corev1ac.ConfigMap("pinned", ns).WithUID("00000000-0000-0000-0000-000000000001").WithData(map[string]string{"a": "1"})
		err := k8sClient.Apply(suiteCtx, withUID, client.FieldOwner("probe"), client.ForceOwnership)
		GinkgoWriter.Printf("apply with metadata.uid, object missing: %v\n", err)
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "a UID cannot ask for absence: %v", err)

		created := corev1ac.ConfigMap("versioned", ns).WithResourceVersion("1").WithData(map[string]string{"a": "1"})
		Expect(k8sClient.Apply(suiteCtx, created, client.FieldOwner("probe"), client.ForceOwnership)).To(Succeed())
		got := &corev1.ConfigMap{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "versioned"}, got)).To(Succeed())
		Expect(managersOf(got, "")).To(ConsistOf("probe"))
		Expect(got.ManagedFields).To(HaveLen(1))
		Expect(got.ManagedFields[0].Operation).To(Equal(metav1.ManagedFieldsOperationApply))

		existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"}, Data: map[string]string{"owner": "user"}}
		Expect(k8sClient.Create(suiteCtx, existing)).To(Succeed())
		again := corev1ac.ConfigMap("taken", ns).WithResourceVersion("1").WithData(map[string]string{"owner": "probe"})
		err = k8sClient.Apply(suiteCtx, again, client.FieldOwner("probe"), client.ForceOwnership)
		GinkgoWriter.Printf("apply with metadata.resourceVersion 1, object exists: %v\n", err)
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(existing), got)).To(Succeed())
		Expect(got.Data).To(Equal(map[string]string{"owner": "user"}))
		Expect(managersOf(got, "")).NotTo(ContainElement("probe"))
	})
})
