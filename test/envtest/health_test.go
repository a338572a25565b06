/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/ssa"
	ssautils "github.com/fluxcd/pkg/ssa/utils"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/rollout"
)

// kstatusOf is what kstatus (Flux's health checks, kubectl wait's conventions) computes for the
// object of kind named, read from the API server.
func kstatusOf(kind, ns, name string) *kstatus.Result {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(inferencev1alpha1.GroupVersion.String())
	u.SetKind(kind)
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, u)).To(Succeed())
	res, err := kstatus.Compute(u)
	Expect(err).NotTo(HaveOccurred())
	return res
}

// rolledTo writes the Deployment's status as the Deployment controller would with updated of
// its replicas on the current template (old pods making up the rest) and available of them
// available: envtest runs no kube-controller-manager.
func rolledTo(ns, name string, updated, available int32) {
	deploymentStatus(ns, name, func(d *appsv1.Deployment) {
		want := ptr.Deref(d.Spec.Replicas, 1)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: want,
			UpdatedReplicas: updated, ReadyReplicas: available, AvailableReplicas: available}
		if updated < want {
			d.Status.Replicas = want + 1 // a surge pod of the new template beside the old ones
		}
	})
}

// deploymentStatus changes the Deployment's status as the Deployment controller would (read,
// change, update the status subresource), retrying on conflicts.
func deploymentStatus(ns, name string, change func(*appsv1.Deployment)) {
	Eventually(func() error {
		d := &appsv1.Deployment{}
		if err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		change(d)
		return k8sClient.Status().Update(suiteCtx, d)
	}).Should(Succeed())
}

// conditionsOf reads the InferenceService's conditions by type.
func conditionsOf(ns, name string) (*inferencev1alpha1.InferenceService, map[string]metav1.Condition) {
	isvc := getISVC(ns, name)
	out := map[string]metav1.Condition{}
	for _, c := range isvc.Status.Conditions {
		out[c.Type] = c
	}
	return isvc, out
}

// expectRow checks one row of docs/health.md's table against the InferenceService: each
// condition type named with its status and reason ("-" for absent), the phase and whether
// observedGeneration is current; kstatus' verdict and the documented Argo CD check's last [K11].
func expectRow(g Gomega, ns, name string, row map[string]string, phase inferencev1alpha1.Phase, current bool, verdict kstatus.Status) {
	isvc, conds := conditionsOf(ns, name)
	for t, want := range row {
		c, ok := conds[t]
		if want == "-" {
			g.Expect(ok).To(BeFalse(), "%s should be absent, is %s/%s: %s", t, c.Status, c.Reason, c.Message)
			continue
		}
		g.Expect(ok).To(BeTrue(), "%s missing", t)
		g.Expect(string(c.Status)+"/"+c.Reason).To(Equal(want), "%s: %s", t, c.Message)
	}
	g.Expect(isvc.Status.Phase).To(Equal(phase))
	g.Expect(isvc.Status.ObservedGeneration == isvc.Generation).To(Equal(current), "observedGeneration %d, generation %d", isvc.Status.ObservedGeneration, isvc.Generation)
	g.Expect(kstatusOf("InferenceService", ns, name).Status).To(Equal(verdict))
	argo, msg := argoHealth("InferenceService", ns, name)
	g.Expect(argo).To(Equal(argoFor(verdict)), "Argo CD health check: %s", msg)
}

const (
	condReady       = inferencev1alpha1.ConditionReady
	condProgressing = inferencev1alpha1.ConditionProgressing
	condReconciling = inferencev1alpha1.ConditionReconciling
	condStalled     = inferencev1alpha1.ConditionStalled
	condDeferred    = inferencev1alpha1.ConditionRolloutDeferred
)

var _ = Describe("Health that Flux and Argo CD read (kstatus)", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("[K1, K11] Flux's apply engine and kstatus wait while 1 of 2 pods run the new template, and finish when all do", func() {
		startOperator(ns, controllers.Config{})
		// Flux's own engine, as kustomize-controller runs it: apply the set, then wait for it.
		rm := ssa.NewResourceManager(k8sClient, polling.NewStatusPoller(k8sClient, k8sClient.RESTMapper(), polling.Options{}),
			ssa.Owner{Field: "kustomize-controller", Group: "kustomize.toolkit.fluxcd.io"})
		apply := func(labels map[string]string) *ssa.ChangeSet {
			objs, err := ssautils.ReadObjects(strings.NewReader(strings.Replace(isvcManifest(ns, "llm", labels), "replicas: 1", "replicas: 2", 1)))
			Expect(err).NotTo(HaveOccurred())
			cs, err := rm.ApplyAllStaged(suiteCtx, objs, ssa.DefaultApplyOptions())
			Expect(err).NotTo(HaveOccurred())
			return cs
		}
		wait := func(cs *ssa.ChangeSet, timeout time.Duration) error {
			return rm.WaitForSetWithContext(suiteCtx, cs.ToObjMetadataSet(), ssa.WaitOptions{Interval: 100 * time.Millisecond, Timeout: timeout, FailFast: true})
		}

		cs := apply(map[string]string{"team": "research"})
		// Note: kstatus calls an object with no status at all Current; the operator's first status
		// write is the earliest it can speak (docs/health.md says so, and the Argo CD check differs).
		eventuallyStatus(ns, "llm")
		Expect(wait(cs, time.Second)).To(HaveOccurred(), "no pod runs yet: Flux must not call it done")
		rolledTo(ns, "llm", 2, 2)
		Expect(wait(cs, 20*time.Second)).To(Succeed())

		By("a new pod template: the Deployment controller has 1 of 2 pods on it")
		cs = apply(map[string]string{"team": "research", "tier": "gold"})
		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"))
		})
		rolledTo(ns, "llm", 1, 2)
		Eventually(func(g Gomega) {
			expectRow(g, ns, "llm", map[string]string{condReady: "True/Available", condProgressing: "True/RollingOut",
				condReconciling: "True/RollingOut", condStalled: "-"}, inferencev1alpha1.PhaseProgressing, true, kstatus.InProgressStatus)
			_, conds := conditionsOf(ns, "llm")
			g.Expect(conds[condReconciling].Message).To(ContainSubstring("1 of 2 pods on the current template, 2 available"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(wait(cs, 2*time.Second)).To(HaveOccurred(), "Flux's wait moved on in the middle of the rollout")

		By("every pod on the new template: Flux's wait returns")
		rolledTo(ns, "llm", 2, 2)
		Expect(wait(cs, 20*time.Second)).To(Succeed())
		Eventually(func(g Gomega) {
			expectRow(g, ns, "llm", map[string]string{condReady: "True/Available", condProgressing: "False/RolledOut",
				condReconciling: "-", condStalled: "-"}, inferencev1alpha1.PhaseReady, true, kstatus.CurrentStatus)
		}).Should(Succeed())
	})

	It("[K3, K11] creating: Reconciling until a pod is available", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "new", nil)
		Eventually(func(g Gomega) {
			expectRow(g, ns, "new", map[string]string{condReady: "False/Unavailable", condProgressing: "True/RollingOut",
				condReconciling: "True/RollingOut", condStalled: "-"}, inferencev1alpha1.PhaseProgressing, true, kstatus.InProgressStatus)
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("[K4, K11, O15] deferred: Reconciling, Progressing and the phase say the change waits, and observedGeneration stays", func() {
		startOperator(ns, controllers.Config{})
		gated(ns, "busy", inferencev1alpha1.RolloutPolicy{}, nil)
		rolledTo(ns, "busy", 1, 1)
		endpointSlice(ns, "busy", newRuntimePod("llamacpp:requests_processing", 2).port())
		removeTier(ns, "busy")
		Eventually(func(g Gomega) {
			expectRow(g, ns, "busy", map[string]string{condReady: "True/Available", condProgressing: "True/" + inferenceservice.ReasonRolloutDeferred,
				condReconciling: "True/" + inferenceservice.ReasonRolloutDeferred, condStalled: "-", condDeferred: "True/" + rollout.ReasonWaitingForIdle},
				inferencev1alpha1.PhaseProgressing, false, kstatus.InProgressStatus)
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("[K5, O15] a rollout gate that fails holds observedGeneration as a deferral does, and stays Reconciling", func() {
		startOperatorWith(operatorOptions{namespaces: []string{ns}, restConfig: impersonating(ns, without(generatedRole(), "endpointslices"))})
		gated(ns, "gate", inferencev1alpha1.RolloutPolicy{}, nil)
		rolledTo(ns, "gate", 1, 1)
		removeTier(ns, "gate")
		Eventually(func(g Gomega) {
			expectRow(g, ns, "gate", map[string]string{condReady: "True/Available", condProgressing: "True/RolloutGateFailed",
				condReconciling: "True/RolloutGateFailed", condStalled: "-", inferencev1alpha1.ConditionDegraded: "True/RolloutGateFailed"},
				inferencev1alpha1.PhaseDegraded, false, kstatus.InProgressStatus)
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("[K6, K2] blocked: Stalled while the Model is missing, so Flux fails fast instead of waiting", func() {
		startOperator(ns, controllers.Config{})
		refISVC(ns, "early", "later", inferencev1alpha1.RuntimeVLLM, nil)
		Eventually(func(g Gomega) {
			expectRow(g, ns, "early", map[string]string{condReady: "False/" + inferenceservice.ReasonModelNotFound,
				condProgressing: "False/" + inferenceservice.ReasonModelNotFound, condReconciling: "-",
				condStalled: "True/" + inferenceservice.ReasonModelNotFound}, inferencev1alpha1.PhasePending, true, kstatus.FailedStatus)
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("[K7, K2] refused: a Deployment of the name that the operator does not control makes it Stalled, never Reconciling", func() {
		someoneElsesDeployment(ns, "taken")
		startOperator(ns, controllers.Config{})
		newISVC(ns, "taken", nil)
		Eventually(func(g Gomega) {
			_, conds := conditionsOf(ns, "taken")
			g.Expect(conds).NotTo(HaveKey(condReconciling))
			g.Expect(conds).To(HaveKeyWithValue(condStalled, And(
				HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "NotControlled"))))
			g.Expect(kstatusOf("InferenceService", ns, "taken").Status).To(Equal(kstatus.FailedStatus))
			g.Expect(argoStatus("InferenceService", ns, "taken")).To(Equal("Degraded"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("[K8, K2] stuck: the Deployment's ProgressDeadlineExceeded makes it Stalled", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "stuck", nil)
		eventuallyDeployment(ns, "stuck", func(g Gomega, d *appsv1.Deployment) {})
		deploymentStatus(ns, "stuck", func(d *appsv1.Deployment) {
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, Conditions: []appsv1.DeploymentCondition{{
				Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
				Message: `ReplicaSet "stuck-1" has timed out progressing.`}}}
		})
		Eventually(func(g Gomega) {
			expectRow(g, ns, "stuck", map[string]string{condReady: "False/Unavailable", condProgressing: "False/ProgressDeadlineExceeded",
				condReconciling: "-", condStalled: "True/ProgressDeadlineExceeded"}, inferencev1alpha1.PhaseDegraded, true, kstatus.FailedStatus)
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("[K9, K11] a Model is Loaded for a generation only when pods of that generation serve, and Reconciling until then", func() {
		startOperator(ns, controllers.Config{})
		newModel(ns, "m", nil)
		refISVC(ns, "user", "m", inferencev1alpha1.RuntimeVLLM, nil)
		eventuallyDeployment(ns, "user", func(g Gomega, d *appsv1.Deployment) {})
		rolledTo(ns, "user", 1, 1)
		modelReady := func(g Gomega) (*inferencev1alpha1.Model, *metav1.Condition) {
			m := &inferencev1alpha1.Model{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, m)).To(Succeed())
			return m, meta.FindStatusCondition(m.Status.Conditions, condReady)
		}
		Eventually(func(g Gomega) {
			m, c := modelReady(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.ObservedGeneration).To(Equal(m.Generation))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(kstatusOf("Model", ns, "m").Status).To(Equal(kstatus.CurrentStatus))

		By("generation 2 of the Model: its pods roll, the old ReplicaSet's pods still serve generation 1")
		before := deployment(ns, "user").Generation
		edit(ns, "m", &inferencev1alpha1.Model{}, func(m *inferencev1alpha1.Model) { m.Spec.Source = "hf://Qwen/Qwen2.5-1.5B-Instruct" })
		eventuallyDeployment(ns, "user", func(g Gomega, d *appsv1.Deployment) { g.Expect(d.Generation).To(BeNumerically(">", before)) })
		Consistently(func(g Gomega) {
			m, c := modelReady(g)
			g.Expect(c.Status == metav1.ConditionTrue && c.ObservedGeneration == m.Generation).To(BeFalse(),
				"Model Loaded for generation %d before any pod of it exists: %s", m.Generation, c.Message)
		}).WithTimeout(3 * time.Second).Should(Succeed())
		Expect(kstatusOf("Model", ns, "m").Status).To(Equal(kstatus.InProgressStatus))
		Expect(argoStatus("Model", ns, "m")).To(Equal("Progressing"))

		By("the new template rolled out: Loaded for generation 2")
		rolledTo(ns, "user", 1, 1)
		Eventually(func(g Gomega) {
			m, c := modelReady(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.ObservedGeneration).To(Equal(m.Generation))
			g.Expect(kstatusOf("Model", ns, "m").Status).To(Equal(kstatus.CurrentStatus))
			g.Expect(argoStatus("Model", ns, "m")).To(Equal("Healthy"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("[I49, K11] a Model nobody uses, and one whose only user is Stalled, are Current and Healthy: no other team's InferenceService holds them", func() {
		// The user's Deployment name is another tenant's: the user is Stalled (NotControlled).
		someoneElsesDeployment(ns, "broken")
		startOperator(ns, controllers.Config{})
		newModel(ns, "unused", nil)
		newModel(ns, "shared", nil)
		refISVC(ns, "broken", "shared", inferencev1alpha1.RuntimeVLLM, nil)
		for _, tc := range []struct{ model, reason string }{{"unused", "NotInUse"}, {"shared", "UsersStalled"}} {
			Eventually(func(g Gomega) {
				m := &inferencev1alpha1.Model{}
				g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: tc.model}, m)).To(Succeed())
				c := meta.FindStatusCondition(m.Status.Conditions, condReady)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status + "/" + metav1.ConditionStatus(c.Reason)).To(Equal(metav1.ConditionStatus("True/" + tc.reason)))
				res := kstatusOf("Model", ns, tc.model)
				g.Expect(res.Status).To(Equal(kstatus.CurrentStatus), res.Message)
				g.Expect(argoStatus("Model", ns, tc.model)).To(Equal(argoFor(res.Status)), "Argo CD and kstatus agree")
			}).WithTimeout(20 * time.Second).Should(Succeed())
		}
		Expect(meta.IsStatusConditionTrue(getISVC(ns, "broken").Status.Conditions, condStalled)).To(BeTrue(), "the user itself is Stalled")
	})

	It("[K10, K2, K11] a ModelRouter with no resolved backend is not Ready, and is Stalled", func() {
		startOperator(ns, controllers.Config{})
		newRouter(ns, "front", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("chat", "nowhere")}
		})
		eventuallyDeployment(ns, "front-router-proxy", func(g Gomega, d *appsv1.Deployment) {})
		rolledTo(ns, "front-router-proxy", 1, 1)
		Eventually(func(g Gomega) {
			r := getRouter(ns, "front")
			c := meta.FindStatusCondition(r.Status.Conditions, condReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(fmt.Sprint(c.Status, "/", c.Reason)).To(Equal("False/" + modelrouter.ReasonNoBackendResolved))
			g.Expect(meta.IsStatusConditionTrue(r.Status.Conditions, condStalled)).To(BeTrue())
			g.Expect(kstatusOf("ModelRouter", ns, "front").Status).To(Equal(kstatus.FailedStatus))
			g.Expect(argoStatus("ModelRouter", ns, "front")).To(Equal("Degraded"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})
})
