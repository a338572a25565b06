/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/test/legacy"
)

// eventNotes lists the notes of Events of a reason about the object named.
func eventNotes(ns, name, reason string) []string {
	evs := &eventsv1.EventList{}
	Expect(k8sClient.List(suiteCtx, evs, client.InNamespace(ns))).To(Succeed())
	var notes []string
	for _, e := range evs.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// upgradeScenario is the state the records-based operator leaves: podLabels team and tier applied
// and recorded, other tools' keys on the template, and then tier removed from the spec while no
// operator runs.
func upgradeScenario(ns, name string) *appsv1.Deployment {
	newISVC(ns, name, func(i *inferencev1alpha1.InferenceService) {
		i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"}
		i.Spec.PodAnnotations = map[string]string{"example.com/owner": "alice"}
	})
	legacyReconcile(ns, name, true)
	otherToolsWrite(ns, name)
	d := deployment(ns, name)
	Expect(d.Annotations).To(HaveKeyWithValue(ownership.RecordLabels, "team,tier"))
	Expect(legacyOwnsTemplateKeys(d)).To(ContainElements("team", "tier"))
	editISVC(ns, name, func(i *inferencev1alpha1.InferenceService) { delete(i.Spec.PodLabels, "tier") })
	return deployment(ns, name)
}

func watchClient() client.WithWatch {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// migrator builds the shim as the operator wires it, around a client the test can instrument.
func migrator(c client.Client) ownership.Migrator {
	return ownership.Migrator{Client: c, Reader: k8sClient, FieldManager: ownership.DefaultFieldManager,
		Legacy: ownership.Legacy{FieldManagers: ownership.DefaultLegacyFieldManagers}}
}

func desiredFor(ns, name string) (*inferencev1alpha1.InferenceService, *appsv1.Deployment) {
	isvc := &inferencev1alpha1.InferenceService{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, isvc)).To(Succeed())
	return isvc, deployment(ns, name)
}

var _ = Describe("Migration from the records-based operator", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("prunes what the spec dropped, keeps other tools' keys, and removes the records, in one roll [U1]", func() {
		before := upgradeScenario(ns, "up")
		migrated := testutil.ToFloat64(ownership.MigrationsTotal.WithLabelValues("InferenceService", "migrated"))

		startOperator(ns, controllers.Config{})
		d := eventuallyDeployment(ns, "up", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("example.com/owner", "alice"))
		expectOtherToolsKeys(Default, d)
		expectSelector(Default, d, "up")
		Expect(d.Annotations).NotTo(HaveKey(ownership.RecordLabels))
		Expect(d.Annotations).NotTo(HaveKey(ownership.RecordAnnotations))
		Expect(d.Annotations).NotTo(HaveKey(ownership.LegacyHash))
		Expect(legacyOwnsTemplateKeys(d)).To(BeEmpty())
		// One roll: the pruning apply. The migration write moves generation by one more, for the
		// record annotations it removes, without touching the template (see the idempotence test).
		Expect(d.Generation).To(Equal(before.Generation + 2))
		Expect(testutil.ToFloat64(ownership.MigrationsTotal.WithLabelValues("InferenceService", "migrated"))).To(Equal(migrated + 1))
		Eventually(func() []string { return eventNotes(ns, "up", "OwnershipMigrated") }).WithTimeout(10 * time.Second).
			Should(ContainElement(And(ContainSubstring("pod labels [team, tier]"), ContainSubstring("[example.com/owner]"))))

		By("a later removal works like any other")
		editISVC(ns, "up", func(i *inferencev1alpha1.InferenceService) { i.Spec.PodLabels = nil })
		d = eventuallyDeployment(ns, "up", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("team"))
		})
		expectOtherToolsKeys(Default, d)
	})

	It("reports one OwnershipMigrated Event per InferenceService for its Deployment and its Service together [U1]", func() {
		upgradeScenario(ns, "both")
		isvc := &inferencev1alpha1.InferenceService{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "both"}, isvc)).To(Succeed())
		_, err := legacy.CreateService(suiteCtx, k8sClient, inferenceservice.Service(isvc))
		Expect(err).NotTo(HaveOccurred())

		startOperator(ns, controllers.Config{})
		eventuallyDeployment(ns, "both", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
		Eventually(func() []string { return eventNotes(ns, "both", "OwnershipMigrated") }).WithTimeout(10 * time.Second).
			Should(ConsistOf(And(ContainSubstring("Deployment "+ns+"/both"), ContainSubstring("pod labels [team, tier]"), ContainSubstring("Service "+ns+"/both"))))
		// One Event, not a second one of the same reason folded into a series (a PATCH of it).
		Consistently(func(g Gomega) {
			evs := &eventsv1.EventList{}
			g.Expect(k8sClient.List(suiteCtx, evs, client.InNamespace(ns))).To(Succeed())
			for _, e := range evs.Items {
				if e.Reason == "OwnershipMigrated" {
					g.Expect(e.Series).To(BeNil(), "OwnershipMigrated became a series: %s", e.Note)
				}
			}
		}).WithTimeout(3 * time.Second).Should(Succeed())
	})

	It("is idempotent: a second run sends no request [U3]", func() {
		upgradeScenario(ns, "idem")
		isvc, live := desiredFor(ns, "idem")
		desired, err := inferenceservice.Deployment(isvc, inferenceservice.Inputs{Replicas: isvc.Spec.Replicas, Ready: false})
		Expect(err).NotTo(HaveOccurred())
		requests := 0
		counting := interceptor.NewClient(watchClient(), interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				requests++
				return c.Patch(ctx, obj, p, opts...)
			},
		})
		m := migrator(counting)
		after, err := ownership.MigrateIfNeeded(suiteCtx, m, isvc, "InferenceService", live, desired)
		Expect(err).NotTo(HaveOccurred())
		Expect(requests).To(Equal(1))
		// Note: the API server bumps a Deployment's generation on any change of its annotations
		// (they are copied to ReplicaSets), so removing the records moves it by one; what decides a
		// roll is the pod template, and that is untouched.
		Expect(after.Spec).To(Equal(live.Spec), "the migration write changes no pod template")
		Expect(after.Generation).To(Equal(live.Generation+1), "only the record annotations changed")
		_, err = ownership.MigrateIfNeeded(suiteCtx, m, isvc, "InferenceService", deployment(ns, "idem"), desired)
		Expect(err).NotTo(HaveOccurred())
		Expect(requests).To(Equal(1), "the second run sent a request")
	})

	It("retries when another manager writes between its read and its write, and loses nothing [U4]", func() {
		upgradeScenario(ns, "race")
		isvc, stale := desiredFor(ns, "race")
		desired, err := inferenceservice.Deployment(isvc, inferenceservice.Inputs{Replicas: isvc.Spec.Replicas})
		Expect(err).NotTo(HaveOccurred())
		patches := 0
		counting := interceptor.NewClient(watchClient(), interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				patches++
				return c.Patch(ctx, obj, p, opts...)
			},
		})
		By("another manager updates the Deployment after the shim read it")
		fresh := deployment(ns, "race")
		fresh.Spec.Template.Labels["mesh.example.com/rev"] = "7"
		Expect(k8sClient.Update(suiteCtx, fresh, client.FieldOwner("mesh-injector"))).To(Succeed())

		after, err := ownership.MigrateIfNeeded(suiteCtx, migrator(counting), isvc, "InferenceService", stale, desired)
		Expect(err).NotTo(HaveOccurred())
		Expect(patches).To(Equal(2), "the first write must fail its resourceVersion test, the second succeed")
		Expect(after.Spec.Template.Labels).To(HaveKeyWithValue("mesh.example.com/rev", "7"))
		Expect(after.Annotations).NotTo(HaveKey(ownership.RecordLabels))
		managers := map[string]bool{}
		for _, e := range after.ManagedFields {
			managers[e.Manager] = true
		}
		Expect(managers).To(HaveKey("mesh-injector"))
		Expect(managers).To(HaveKey("argocd-controller"))
		Expect(managers).To(HaveKey("kubectl-rollout"))
		Expect(managers).To(HaveKey("sidecar-injector"))
		Expect(managers).NotTo(HaveKey("manager"))
	})

	It("ends right when stopped right after the migration write [U4]", func() {
		upgradeScenario(ns, "stop")
		isvc, live := desiredFor(ns, "stop")
		desired, err := inferenceservice.Deployment(isvc, inferenceservice.Inputs{Replicas: isvc.Spec.Replicas})
		Expect(err).NotTo(HaveOccurred())
		_, err = ownership.MigrateIfNeeded(suiteCtx, migrator(k8sClient), isvc, "InferenceService", live, desired)
		Expect(err).NotTo(HaveOccurred())
		// The process stops here; a new one starts and finds no legacy trace, only its own ownership.
		startOperator(ns, controllers.Config{})
		d := eventuallyDeployment(ns, "stop", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		expectOtherToolsKeys(Default, d)
	})

	It("never prunes an operator key a record lists, and ignores an unparseable record entry key by key [U5]", func() {
		newISVC(ns, "rec", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"}
		})
		legacyReconcile(ns, "rec", true)
		Eventually(func() error {
			d := deployment(ns, "rec")
			d.Annotations[ownership.RecordLabels] = "app,Bad Key!,team,tier"
			return k8sClient.Update(suiteCtx, d, client.FieldOwner("manager"))
		}).Should(Succeed())
		editISVC(ns, "rec", func(i *inferencev1alpha1.InferenceService) { delete(i.Spec.PodLabels, "tier") })

		startOperator(ns, controllers.Config{})
		d := eventuallyDeployment(ns, "rec", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("app", "rec"))
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		expectSelector(Default, d, "rec")
		Eventually(func() []string { return eventNotes(ns, "rec", "LegacyRecordInvalid") }).WithTimeout(10 * time.Second).
			Should(ContainElement(ContainSubstring("[Bad Key!]")))
		evs := &eventsv1.EventList{}
		Expect(k8sClient.List(suiteCtx, evs, client.InNamespace(ns))).To(Succeed())
		for _, e := range evs.Items {
			if e.Reason == "LegacyRecordInvalid" {
				Expect(e.Type).To(Equal(corev1.EventTypeWarning))
			}
		}
	})

	It("migrates router-proxy Deployments too [U2]", func() {
		router := &inferencev1alpha1.ModelRouter{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"},
			Spec: inferencev1alpha1.ModelRouterSpec{
				Backends: []inferencev1alpha1.Backend{{Name: "oai", External: &inferencev1alpha1.ExternalBackend{Provider: "openai", URL: "https://api.example.com/v1"}}},
				Proxy:    &inferencev1alpha1.ProxySpec{PodLabels: map[string]inferencev1alpha1.LabelValue{"team": "a", "tier": "gold"}},
			},
		}
		Expect(k8sClient.Create(suiteCtx, router)).To(Succeed())
		legacyReconcileRouter(ns, "r")
		otherToolsWrite(ns, "r-router-proxy")
		Expect(deployment(ns, "r-router-proxy").Annotations).To(HaveKeyWithValue(ownership.RecordLabels, "team,tier"))
		Eventually(func() error {
			r := &inferencev1alpha1.ModelRouter{}
			if err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "r"}, r); err != nil {
				return err
			}
			delete(r.Spec.Proxy.PodLabels, "tier")
			return k8sClient.Update(suiteCtx, r)
		}).Should(Succeed())

		startOperator(ns, controllers.Config{})
		d := eventuallyDeployment(ns, "r-router-proxy", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey("tier"))
		})
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
		expectOtherToolsKeys(Default, d)
		Expect(d.Annotations).NotTo(HaveKey(ownership.RecordLabels))
		Expect(legacyOwnsTemplateKeys(d)).To(BeEmpty())
		Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app": "r-router-proxy", "inference.llmkube.dev/model-router": "r"}))
	})

	DescribeTable("takes over unrecorded legacy keys only with --adopt-legacy-ownership",
		func(adopt bool) {
			newISVC(ns, "adopt", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "a", "old": "x"}
			})
			legacyReconcile(ns, "adopt", false) // from before records existed
			otherToolsWrite(ns, "adopt")
			editISVC(ns, "adopt", func(i *inferencev1alpha1.InferenceService) { delete(i.Spec.PodLabels, "old") })
			gen := deployment(ns, "adopt").Generation

			startOperator(ns, controllers.Config{AdoptLegacyOwnership: adopt})
			Eventually(func() []string { return legacyOwnsTemplateKeys(deployment(ns, "adopt")) }).
				WithTimeout(20 * time.Second).Should(BeEmpty())
			settle(isvcController, reconciles(isvcController), 0)
			d := deployment(ns, "adopt")
			expectOtherToolsKeys(Default, d)
			Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "a"))
			if adopt {
				Expect(d.Spec.Template.Labels).NotTo(HaveKey("old"), "adopted and no longer desired: pruned")
				Expect(d.Generation).To(Equal(gen + 1))
			} else {
				Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("old", "x"), "released, never deleted")
				Expect(d.Generation).To(Equal(gen))
			}
		},
		Entry("off", false),
		Entry("on", true),
	)
})
