/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
)

// This spec is generated from the plans themselves: for every kind, every object its plan can
// produce is pre-created as another tenant's (no controller reference), and the owner must apply
// nothing that needs it (plan.Dependents, from the Needs the plan declares), leave it untouched,
// and report the refusal. A new planned object is covered without a new test.

// refusalCase is one kind, with an owner whose plan has every object that kind can plan.
type refusalCase struct {
	kind string
	// owner is the owner in namespace ns, not yet created.
	owner func(ns string) client.Object
	// objects are its plan's objects.
	objects func(owner client.Object) []plan.Object
	// conditions reads the owner's conditions.
	conditions func(owner client.Object) []metav1.Condition
}

var refusalCases = []refusalCase{
	{
		kind: "InferenceService",
		owner: func(ns string) client.Object {
			// An inline model with a Cached cache (the claim is the InferenceService's), autoscaling (an HPA) and
			// spec.gateway (an InferencePool and an HTTPRoute): every object the kind plans.
			return &inferencev1alpha1.InferenceService{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
				Spec: inferencev1alpha1.InferenceServiceSpec{
					Model:       inferencev1alpha1.ModelSpec{Source: "hf://org/repo/model.gguf"},
					Replicas:    ptr.To[int32](1),
					ModelCache:  &inferencev1alpha1.ModelCacheSpec{},
					Autoscaling: &inferencev1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3},
					Gateway:     &inferencev1alpha1.GatewaySpec{ParentRefs: []inferencev1alpha1.GatewayParentReference{{Name: "shared"}}},
				},
			}
		},
		objects: func(o client.Object) []plan.Object {
			p, err := inferenceservice.PlanFor(&inferenceservice.Observed{ISVC: o.(*inferencev1alpha1.InferenceService)},
				inferenceservice.Flags{FieldManager: ownership.DefaultFieldManager})
			Expect(err).NotTo(HaveOccurred())
			objs, err := p.Objects(nil, ownership.DefaultFieldManager)
			Expect(err).NotTo(HaveOccurred())
			return objs
		},
		conditions: func(o client.Object) []metav1.Condition {
			return o.(*inferencev1alpha1.InferenceService).Status.Conditions
		},
	},
	{
		kind: "ModelRouter",
		owner: func(ns string) client.Object {
			return &inferencev1alpha1.ModelRouter{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
				Spec:       inferencev1alpha1.ModelRouterSpec{Backends: []inferencev1alpha1.Backend{externalBackend("cloud", "")}},
			}
		},
		objects: func(o client.Object) []plan.Object {
			p, err := modelrouter.PlanFor(&modelrouter.Observed{Router: o.(*inferencev1alpha1.ModelRouter)}, modelrouter.Flags{})
			Expect(err).NotTo(HaveOccurred())
			return p.Objects()
		},
		conditions: func(o client.Object) []metav1.Condition { return o.(*inferencev1alpha1.ModelRouter).Status.Conditions },
	},
}

// asAnotherTenants is o's desired object as someone else would create it: the same name and
// content, no controller reference, written by another field manager.
func asAnotherTenants(o plan.Object) *unstructured.Unstructured {
	raw, err := json.Marshal(o.Desired)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(json.Unmarshal(raw, &u.Object)).To(Succeed())
	unstructured.RemoveNestedField(u.Object, "metadata", "ownerReferences")
	return u
}

var _ = Describe("A refusal is a property of the plan", func() {
	for _, kc := range refusalCases {
		for i, o := range kc.objects(kc.owner("placeholder")) {
			kc, i, ref := kc, i, o.Ref()
			It(fmt.Sprintf("%s: another tenant's %s of the planned name holds everything that needs it, and is left untouched [I49]", kc.kind, ref.Kind), func() {
				ns := newNamespace()
				owner := kc.owner(ns)
				objs := kc.objects(owner)
				taken := objs[i]
				Expect(taken.Kind).To(Equal(ref.Kind), "the plan is the same in every namespace")
				Expect(k8sClient.Create(suiteCtx, asAnotherTenants(taken), client.FieldOwner("other-tenant"))).To(Succeed())
				startOperator(ns, controllers.Config{})
				Expect(k8sClient.Create(suiteCtx, owner)).To(Succeed())

				name := taken.Kind + " " + taken.Key.String()
				By("the owner reports the refusal of " + name)
				Eventually(func(g Gomega) {
					got := fresh(owner)
					g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(owner), got)).To(Succeed())
					conds := kc.conditions(got)
					d := meta.FindStatusCondition(conds, inferencev1alpha1.ConditionDegraded)
					g.Expect(d).NotTo(BeNil())
					g.Expect(d.Reason).To(Equal("NotControlled"), d.Message)
					g.Expect(d.Message).To(ContainSubstring(name))
					g.Expect(meta.IsStatusConditionTrue(conds, inferencev1alpha1.ConditionStalled)).To(BeTrue(), "Stalled: only a person's change ends it")
				}).WithTimeout(20 * time.Second).Should(Succeed())

				dependents := plan.Dependents(objs, taken.Ref())
				By(fmt.Sprintf("nothing that needs it is applied: %v", dependents))
				Consistently(func(g Gomega) {
					for _, d := range dependents {
						u := &unstructured.Unstructured{}
						u.SetGroupVersionKind(objectGVK(objs, d))
						err := k8sClient.Get(suiteCtx, d.Key, u)
						g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s needs %s, another tenant's, and was applied (err %v)", d, name, err)
					}
					u := &unstructured.Unstructured{}
					u.SetGroupVersionKind(taken.GVK())
					g.Expect(k8sClient.Get(suiteCtx, taken.Key, u)).To(Succeed())
					g.Expect(managersOf(u, "")).To(Equal([]string{"other-tenant"}), "the other tenant's object is left untouched")
					g.Expect(u.GetOwnerReferences()).To(BeEmpty())
				}).WithTimeout(2 * time.Second).Should(Succeed())
			})
		}
	}

	It("withdraws what the router controls and needs an object that became another tenant's: the proxy stops serving their routing document [I49]", func() {
		ns := newNamespace()
		op := startOperator(ns, controllers.Config{})
		newRouter(ns, "r", nil)
		key := client.ObjectKey{Namespace: ns, Name: "r-router-proxy"}
		eventually(ns, key.Name, &appsv1.Deployment{}, func(g Gomega, d *appsv1.Deployment) {
			g.Expect(controllerOf(d)).To(Equal("ModelRouter/r"))
		})
		eventually(ns, key.Name, &corev1.Service{}, func(g Gomega, s *corev1.Service) {
			g.Expect(controllerOf(s)).To(Equal("ModelRouter/r"))
		})
		op.stop()

		By("the routing document is replaced by another tenant's while the operator is down")
		Expect(k8sClient.Delete(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}})).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(suiteCtx, key, &corev1.ConfigMap{}))
		}).Should(BeTrue())
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name},
			Data: map[string]string{"routing.yaml": "backends: [{name: cloud, url: https://attacker.example}]"}}
		Expect(k8sClient.Create(suiteCtx, theirs, client.FieldOwner("other-tenant"))).To(Succeed())
		startOperator(ns, controllers.Config{})

		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, key, &appsv1.Deployment{}))).To(BeTrue(), "the proxy Deployment mounting their ConfigMap is withdrawn")
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, key, &corev1.Service{}))).To(BeTrue(), "the Service selecting it is withdrawn")
		}).WithTimeout(20 * time.Second).Should(Succeed())
		notControlled(ns, "r", &inferencev1alpha1.ModelRouter{}, "ConfigMap "+ns+"/r-router-proxy", "no controller")
		got := &corev1.ConfigMap{}
		Expect(k8sClient.Get(suiteCtx, key, got)).To(Succeed())
		Expect(got.Data).To(Equal(theirs.Data), "their ConfigMap is left untouched")
	})
})

// objectGVK is the GVK of the object of objs that ref names.
func objectGVK(objs []plan.Object, ref plan.Ref) (gvk schema.GroupVersionKind) {
	for _, o := range objs {
		if o.Ref() == ref {
			return o.GVK()
		}
	}
	Fail("no planned object " + ref.String())
	return gvk
}
