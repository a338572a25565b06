/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

// notControlled waits until the owner's Degraded condition says the object named is not its to
// write, and a Warning Event says the same, naming who controls it.
func notControlled(ns, owner string, kind client.Object, object, controller string) {
	Eventually(func(g Gomega) {
		o := fresh(kind)
		g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: owner}, o)).To(Succeed())
		var conds []metav1.Condition
		switch o := o.(type) {
		case *inferencev1alpha1.InferenceService:
			conds = o.Status.Conditions
		case *inferencev1alpha1.ModelRouter:
			conds = o.Status.Conditions
		}
		c := meta.FindStatusCondition(conds, inferencev1alpha1.ConditionDegraded)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal("NotControlled"), c.Message)
		g.Expect(c.Message).To(And(ContainSubstring(object), ContainSubstring(controller)))
		g.Expect(eventNotes(ns, owner, "NotControlled")).To(ContainElement(And(ContainSubstring(object), ContainSubstring(controller))))
	}).WithTimeout(20 * time.Second).Should(Succeed())
}

func controllerOf(obj client.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return ""
}

var _ = Describe("Ownership by identity", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("leaves a user's claim of the cache's name untouched and says so, so deleting the Model never deletes the user's data [O11, M8]", func() {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m2-model-cache", Labels: map[string]string{"team": "data", "backup": "daily"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("50Gi")}},
			},
		}
		Expect(k8sClient.Create(suiteCtx, claim)).To(Succeed())
		startOperator(ns, controllers.Config{})
		newModel(ns, "m2", nil)
		refISVC(ns, "chat", "m2", inferencev1alpha1.RuntimeVLLM, nil)

		notControlled(ns, "chat", &inferencev1alpha1.InferenceService{}, "PersistentVolumeClaim "+ns+"/m2-model-cache", "no controller")
		got := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(claim), got)).To(Succeed())
		Expect(got.OwnerReferences).To(BeEmpty())
		Expect(got.Labels).To(Equal(claim.Labels))
		Expect(got.Spec.Resources.Requests.Storage().String()).To(Equal("50Gi"))
		Expect(managersOf(got, "")).NotTo(ContainElement("llmkube-operator"))
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "chat"}, &appsv1.Deployment{})).
			To(MatchError(ContainSubstring("not found")), "no pod mounts the user's claim")
	})

	It("leaves another controller's Role and ServiceAccount untouched: no adoption, no legacy migration [O11]", func() {
		// Written by another kubebuilder controller, whose field manager is "manager" too.
		byOther := client.FieldOwner("manager")
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "front-router-proxy"}}
		Expect(k8sClient.Create(suiteCtx, sa, byOther)).To(Succeed())
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "front-router-proxy", Labels: map[string]string{"owner": "other"}},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
		}
		Expect(k8sClient.Create(suiteCtx, role, byOther)).To(Succeed())
		startOperator(ns, controllers.Config{})
		newRouter(ns, "front", nil)

		notControlled(ns, "front", &inferencev1alpha1.ModelRouter{}, "Role "+ns+"/front-router-proxy", "no controller")
		gotRole := &rbacv1.Role{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(role), gotRole)).To(Succeed())
		Expect(gotRole.Rules).To(Equal(role.Rules))
		Expect(gotRole.OwnerReferences).To(BeEmpty())
		Expect(managersOf(gotRole, "")).To(Equal([]string{"manager"}))
		gotSA := &corev1.ServiceAccount{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(sa), gotSA)).To(Succeed())
		Expect(gotSA.OwnerReferences).To(BeEmpty())
		Expect(managersOf(gotSA, "")).NotTo(ContainElement("llmkube-operator"))
		Expect(eventNotes(ns, "front", "OwnershipMigrated")).To(BeEmpty())
	})

	It("refuses a second owner of the proxy Service: the InferenceService keeps its Service and selector [O11]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "chat-router-proxy", nil)
		svc := eventually(ns, "chat-router-proxy", &corev1.Service{}, func(g Gomega, s *corev1.Service) {
			g.Expect(controllerOf(s)).To(Equal("InferenceService/chat-router-proxy"))
		})
		newRouter(ns, "chat", nil)

		// The router's proxy Deployment is refused first, and nothing of a refused proxy is applied.
		notControlled(ns, "chat", &inferencev1alpha1.ModelRouter{}, "Deployment "+ns+"/chat-router-proxy", "InferenceService chat-router-proxy")
		Consistently(func(g Gomega) {
			got := &corev1.Service{}
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(svc), got)).To(Succeed())
			g.Expect(controllerOf(got)).To(Equal("InferenceService/chat-router-proxy"))
			g.Expect(got.Spec.Selector).To(Equal(svc.Spec.Selector))
		}).WithTimeout(3 * time.Second).Should(Succeed())
		isvc := getISVC(ns, "chat-router-proxy")
		Expect(meta.IsStatusConditionFalse(isvc.Status.Conditions, inferencev1alpha1.ConditionDegraded)).To(BeTrue())
	})

	It("refuses a second owner of a cache claim: the first keeps it, and it never flips [O11]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "llama-model", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("10Gi"))}
		})
		eventually(ns, "llama-model-cache", &corev1.PersistentVolumeClaim{}, func(g Gomega, c *corev1.PersistentVolumeClaim) {
			g.Expect(controllerOf(c)).To(Equal("InferenceService/llama-model"))
		})
		newModel(ns, "llama", nil)
		refISVC(ns, "served", "llama", inferencev1alpha1.RuntimeVLLM, nil)

		notControlled(ns, "served", &inferencev1alpha1.InferenceService{}, "PersistentVolumeClaim "+ns+"/llama-model-cache", "InferenceService llama-model")
		Consistently(func(g Gomega) {
			got := &corev1.PersistentVolumeClaim{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "llama-model-cache"}, got)).To(Succeed())
			g.Expect(got.OwnerReferences).To(HaveLen(1))
			g.Expect(controllerOf(got)).To(Equal("InferenceService/llama-model"))
		}).WithTimeout(3 * time.Second).Should(Succeed())
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "served"}, &appsv1.Deployment{})).
			To(MatchError(ContainSubstring("not found")), "no second model shares the ReadWriteOnce cache")
	})
})

// neverSees makes the operator's cache blind to every object of obj's kind, as a cache that lags
// behind the API server is: an informer in backoff, a watch not caught up.
func neverSees(obj client.Object) func(*cache.Options) {
	return func(o *cache.Options) {
		if o.ByObject == nil {
			o.ByObject = map[client.Object]cache.ByObject{}
		}
		for k := range o.ByObject {
			if reflect.TypeOf(k) == reflect.TypeOf(obj) {
				delete(o.ByObject, k)
			}
		}
		o.ByObject[obj] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"test.llmkube.dev/never": "true"})}
	}
}

var _ = Describe("Gateway decisions from the API server, not the cache", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("deletes the HTTPRoute a removed spec.gateway leaves, though the cache does not have it [G3]", func() {
		startOperatorWith(operatorOptions{namespaces: []string{ns}, cache: neverSees(&gatewayv1.HTTPRoute{})})
		newISVC(ns, "m", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gw"}))
		eventually(ns, "m", &gatewayv1.HTTPRoute{}, func(g Gomega, r *gatewayv1.HTTPRoute) {})
		gatewayReady(ns, "m", metav1.ConditionUnknown, inferenceservice.ReasonGatewayPending)

		editISVC(ns, "m", func(i *inferencev1alpha1.InferenceService) { i.Spec.Gateway = nil })
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, &gatewayv1.HTTPRoute{}))
		}).WithTimeout(15*time.Second).Should(BeTrue(), "the route still attaches the pool to the Gateway")
		eventually(ns, "m", &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
			g.Expect(meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)).To(BeNil())
		})
	})

	It("never reports GatewayReady=True for an HTTPRoute generation no Gateway has reported on [G2]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "m", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gw"}))
		eventually(ns, "m", &gatewayv1.HTTPRoute{}, func(g Gomega, r *gatewayv1.HTTPRoute) {})
		reportOnRoute(ns, "m", "gw", "Accepted", "ResolvedRefs")
		reportOnPool(ns, "m", "gw", "Accepted", "ResolvedRefs")
		gatewayReady(ns, "m", metav1.ConditionTrue, inferenceservice.ReasonGatewayAccepted)

		// Every status the operator writes, seen through a watch, so no intermediate one is missed.
		w, err := watchClient().Watch(suiteCtx, &inferencev1alpha1.InferenceServiceList{}, client.InNamespace(ns))
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		editISVC(ns, "m", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Gateway.Hostnames = []inferencev1alpha1.GatewayHostname{"new.example.com"}
		})
		edited := getISVC(ns, "m").Generation
		seen := 0
		deadline := time.After(5 * time.Second)
		for done := false; !done; {
			select {
			case ev := <-w.ResultChan():
				i, ok := ev.Object.(*inferencev1alpha1.InferenceService)
				if !ok {
					continue
				}
				c := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)
				if c == nil || c.ObservedGeneration != edited {
					continue
				}
				seen++
				Expect(c.Status).NotTo(Equal(metav1.ConditionTrue), "GatewayReady for generation %d: %s", edited, c.Message)
			case <-deadline:
				done = true
			}
		}
		Expect(seen).To(BeNumerically(">", 0), "the edit's status was written")
		r := route(ns, "m")
		Expect(r.Spec.Hostnames).To(Equal([]gatewayv1.Hostname{"new.example.com"}))
		Expect(r.Status.Parents[0].Conditions[0].ObservedGeneration).To(BeNumerically("<", r.Generation))
	})
})

var _ = Describe("The legacy migration's entry", func() {
	It("is never empty, so no before-first-apply co-owner appears when desired and live share no field [O14]", func() {
		ns := newNamespace()
		live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"old": "1"}}
		Expect(k8sClient.Create(suiteCtx, live, client.FieldOwner("manager"))).To(Succeed())
		desired := corev1ac.ConfigMap("cm", ns).WithData(map[string]string{"new": "2"})

		migrated, err := ownership.MigrateIfNeeded(suiteCtx, migrator(k8sClient), live, "InferenceService", live, desired)
		Expect(err).NotTo(HaveOccurred())
		Expect(managersOf(migrated, "")).To(Equal([]string{"llmkube-operator"}), "the operator's Apply entry survives the write")

		Expect(k8sClient.Apply(suiteCtx, desired, client.FieldOwner("llmkube-operator"), client.ForceOwnership)).To(Succeed())
		got := &corev1.ConfigMap{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(live), got)).To(Succeed())
		Expect(managersOf(got, "")).To(Equal([]string{"llmkube-operator"}))
		Expect(got.Data).To(HaveKeyWithValue("new", "2"))
	})
})

var _ = Describe("A Model's cache claim asked for two sizes", func() {
	It("keeps the largest: the smaller InferenceService is not Degraded and the request never flips [M7]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		newModel(ns, "llama", nil)
		size := func(s string) func(*inferencev1alpha1.InferenceService) {
			return func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse(s))}
			}
		}
		refISVC(ns, "big", "llama", inferencev1alpha1.RuntimeVLLM, size("20Gi"))
		eventually(ns, "llama-model-cache", &corev1.PersistentVolumeClaim{}, func(g Gomega, c *corev1.PersistentVolumeClaim) {
			g.Expect(c.Spec.Resources.Requests.Storage().String()).To(Equal("20Gi"))
		})
		refISVC(ns, "small", "llama", inferencev1alpha1.RuntimeVLLM, size("15Gi"))
		eventually(ns, "small", &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
			c := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionDegraded)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(i.Generation))
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
		})
		touch(ns, "big")
		touch(ns, "small")
		Consistently(func(g Gomega) {
			c := &corev1.PersistentVolumeClaim{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "llama-model-cache"}, c)).To(Succeed())
			g.Expect(c.Spec.Resources.Requests.Storage().String()).To(Equal("20Gi"))
			i := getISVC(ns, "small")
			g.Expect(meta.IsStatusConditionFalse(i.Status.Conditions, inferencev1alpha1.ConditionDegraded)).To(BeTrue())
		}).WithTimeout(3 * time.Second).Should(Succeed())
		Expect(eventNotes(ns, "small", "CacheSizeKept")).To(ConsistOf(ContainSubstring("keeps 20Gi")), "reported once")
	})
})

var _ = Describe("Caches bounded to what the operator owns", func() {
	It("labels what it writes, caches only that, and labels an object written before the label [O12]", func() {
		ns := newNamespace()
		By("an older operator's Service of the InferenceService, without the label")
		isvc := newISVC(ns, "old", nil)
		Expect(k8sClient.Apply(suiteCtx, inferenceservice.Service(isvc), client.FieldOwner("llmkube-operator"), client.ForceOwnership)).To(Succeed())
		unrelated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unrelated"}}
		Expect(k8sClient.Create(suiteCtx, unrelated)).To(Succeed())

		op := startOperator(ns, controllers.Config{})
		newRouter(ns, "r", nil)
		svc := eventually(ns, "old", &corev1.Service{}, func(g Gomega, s *corev1.Service) {
			g.Expect(s.Labels).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy))
		})
		Expect(controllerOf(svc)).To(Equal("InferenceService/old"))
		eventuallyDeployment(ns, "old", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Labels).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy))
		})
		eventuallyConfigMap(ns, "r-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Labels).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy))
		})
		for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}, &corev1.Service{}} {
			eventually(ns, "r-router-proxy", obj, func(g Gomega, o client.Object) {
				g.Expect(o.GetLabels()).To(HaveKeyWithValue(ownership.LabelManagedBy, ownership.ManagedBy))
			})
		}

		By("the cache holds the operator's ConfigMap, not the unrelated one")
		Eventually(func() error {
			return op.mgr.GetCache().Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "r-router-proxy"}, &corev1.ConfigMap{})
		}).Should(Succeed())
		Expect(apierrors.IsNotFound(op.mgr.GetCache().Get(suiteCtx, client.ObjectKeyFromObject(unrelated), &corev1.ConfigMap{}))).To(BeTrue())
	})
})

var _ = Describe("Drift repair", func() {
	It("repairs within the resync period a change no event carries, and writes nothing when nothing drifted [O13, O5]", func() {
		ns := newNamespace()
		// A cache blind to Services: the person's edit below reaches the operator by no event.
		op := startOperatorWith(operatorOptions{namespaces: []string{ns}, cache: neverSees(&corev1.Service{}),
			cfg: controllers.Config{DriftRepair: time.Second}})
		newISVC(ns, "m", nil)
		svc := eventually(ns, "m", &corev1.Service{}, func(g Gomega, s *corev1.Service) {})
		eventually(ns, "m", &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
			g.Expect(meta.IsStatusConditionFalse(i.Status.Conditions, inferencev1alpha1.ConditionDegraded)).To(BeTrue())
		})

		By("nothing drifted: several resyncs, no write")
		time.Sleep(time.Second)
		mark := op.mark()
		time.Sleep(4 * time.Second)
		Expect(op.writes(mark)).To(BeEmpty())

		By("a person's forced change of the selector is taken back within a few periods")
		person := corev1ac.Service("m", ns).WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "elsewhere"}))
		Expect(k8sClient.Apply(suiteCtx, person, client.FieldOwner("person"), client.ForceOwnership)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &corev1.Service{}
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(svc), got)).To(Succeed())
			g.Expect(got.Spec.Selector).To(Equal(svc.Spec.Selector))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})
})
