/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

var _ = Describe("A conflict behind a lagging read", func() {
	It("is reported when the new desired state differs from what the last apply sent over the read [O21, O9]", func() {
		ns := newNamespace()
		note := func(v string) *appsv1ac.DeploymentApplyConfiguration {
			return appsv1ac.Deployment("lag", ns).WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().
				WithAnnotations(map[string]string{"example.com/note": v})))
		}
		newISVC(ns, "lag", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodAnnotations = map[string]string{"example.com/note": "operator"}
		})
		rec := events.NewFakeRecorder(100)
		r := &inferenceservice.Reconciler{
			Client: k8sClient,
			Applier: ownership.Applier{Client: k8sClient, FieldManager: ownership.DefaultFieldManager, Recorder: rec, Reader: k8sClient,
				Written: &ownership.OwnWrites{FieldManager: ownership.DefaultFieldManager}},
			Recorder: rec,
		}
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "lag"}}
		_, err := r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		conflicts := func() []string {
			var out []string
			for len(rec.Events) > 0 {
				if e := <-rec.Events; strings.Contains(e, ownership.ReasonOwnershipConflict) {
					out = append(out, e)
				}
			}
			return out
		}

		By("a person takes the annotation; the operator takes it back and reports it, and its read then lags at that change")
		Expect(k8sClient.Apply(suiteCtx, note("person-1"), client.FieldOwner("person"), client.ForceOwnership)).To(Succeed())
		taken := deployment(ns, "lag")
		stale := laggingDeployments(func() *appsv1.Deployment { return taken }, interceptor.Funcs{})
		r.Client, r.Applier.Client = stale, stale
		_, err = r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		Expect(conflicts()).To(ConsistOf(ContainSubstring("now owned by person")))

		By("the person takes it again, and the spec adds a pod label, while the read still lags")
		Expect(k8sClient.Apply(suiteCtx, note("person-2"), client.FieldOwner("person"), client.ForceOwnership)).To(Succeed())
		editISVC(ns, "lag", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"team": "b"}
		})
		_, err = r.Reconcile(suiteCtx, req)
		Expect(err).NotTo(HaveOccurred())
		d := deployment(ns, "lag")
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("example.com/note", "operator"))
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "b"))
		Expect(conflicts()).To(ConsistOf(ContainSubstring("now owned by person")), "the person's second change was taken back without a report")
	})
})
