/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pmezard/go-difflib/difflib"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// diffJSON is kubectl llmkube diff -o json for one target.
type diffJSON struct {
	Object  string `json:"object"`
	Blocked string `json:"blocked"`
	Objects []struct {
		Kind    string `json:"kind"`
		Name    string `json:"name"`
		Action  string `json:"action"`
		Diff    string `json:"diff"`
		Refused string `json:"refused"`
	} `json:"objects"`
}

// planOf runs kubectl llmkube diff TARGET -o json with the operator's flags and returns the plan
// and the exit code.
func planOf(ns, target string, flags ...string) (diffJSON, int) {
	out, stderr, code := llmkube(append([]string{"diff", target, "-n", ns, "-o", "json"}, flags...)...)
	Expect(code).To(BeNumerically("<", 2), stderr)
	var doc diffJSON
	Expect(json.Unmarshal([]byte(out), &doc)).To(Succeed(), out)
	return doc, code
}

// actionsOf is kind/name -> action of a plan.
func actionsOf(doc diffJSON) map[string]string {
	out := map[string]string{}
	for _, o := range doc.Objects {
		out[o.Kind+"/"+o.Name] = o.Action
	}
	return out
}

// driftKinds are the kinds the operator writes, for the snapshots.
var driftKinds = []schema.GroupVersionKind{
	appsv1.SchemeGroupVersion.WithKind("Deployment"),
	corev1.SchemeGroupVersion.WithKind("Service"),
	corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
	rbacv1.SchemeGroupVersion.WithKind("Role"),
	rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
	autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
	inferencepoolv1.SchemeGroupVersion.WithKind("InferencePool"),
	gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute"),
}

// snapshot is every object of the operator's kinds in ns, kind/name -> the object as the plugin
// renders it (YAML without managedFields, resourceVersion and status).
func snapshot(ns string) map[string]string {
	out := map[string]string{}
	for _, gvk := range driftKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		Expect(k8sClient.List(suiteCtx, list, client.InNamespace(ns))).To(Succeed())
		for _, u := range list.Items {
			if gvk.Kind == "ConfigMap" && u.GetName() == "kube-root-ca.crt" {
				continue
			}
			unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
			unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(u.Object, "status")
			data, err := yaml.Marshal(u.Object)
			Expect(err).NotTo(HaveOccurred())
			out[gvk.Kind+"/"+u.GetName()] = string(data)
		}
	}
	return out
}

// applySamples creates every InferenceService, Model and ModelRouter of config/samples in ns.
func applySamples(ns string) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	for _, f := range files {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{}
		Expect(utilyaml.Unmarshal(data, &u.Object)).To(Succeed(), f)
		u.SetNamespace(ns)
		Expect(k8sClient.Create(suiteCtx, u)).To(Succeed(), f)
	}
}

var _ = Describe("one plan: kubectl llmkube diff shows what the operator applies", func() {
	var ns string
	// The operator runs with non-default flags, which the plugin is told as well.
	cfg := controllers.Config{RouterProxyImage: "registry.example.com/router-proxy:drift", EmitScrapeAnnotations: true}
	flags := []string{"--router-proxy-image", "registry.example.com/router-proxy:drift", "--emit-scrape-annotations"}
	BeforeEach(func() { ns = newNamespace() })

	It("plans what was applied for every sample and generated spec, and after a spec change exactly what the operator then changes, a removed gateway's deletions and a refusal included [P2, P9, P10]", func() {
		By("every sample, and specs across runtimes, models, caches, gateway, autoscaling and both backend kinds")
		applySamples(ns)
		for _, rt := range []inferencev1alpha1.Runtime{inferencev1alpha1.RuntimeVLLM, inferencev1alpha1.RuntimeTGI, inferencev1alpha1.RuntimeSGLang, inferencev1alpha1.RuntimeGeneric} {
			newISVC(ns, "rt-"+string(rt), func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Runtime = rt
				if rt == inferencev1alpha1.RuntimeGeneric {
					i.Spec.Image = ptr.To("registry.example.com/server:1")
				}
			})
		}
		newModel(ns, "m", func(m *inferencev1alpha1.Model) {
			m.Spec.SourceSecretRef = &inferencev1alpha1.SecretKeyReference{Name: "hf"}
		})
		refISVC(ns, "ref-ephemeral", "m", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Persistence: ptr.To(inferencev1alpha1.ModelCacheEphemeral), Size: ptr.To(resource.MustParse("1Gi"))}
		})
		refISVC(ns, "ref-claim", "m", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{ClaimName: ptr.To("my-claim")}
		})
		newISVC(ns, "inline-cached", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Persistence: ptr.To(inferencev1alpha1.ModelCacheCached)}
		})
		newISVC(ns, "scaled", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Replicas = nil
			i.Spec.Autoscaling = &inferencev1alpha1.AutoscalingSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 4}
		})
		newISVC(ns, "gw", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gateway"}))
		newISVC(ns, "gw-gone", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gateway"}))
		// Its Service's name is someone else's: the operator applies its Deployment and leaves the
		// Service as it is [P10].
		Expect(k8sClient.Create(suiteCtx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 80}}}})).To(Succeed())
		newISVC(ns, "taken", nil)
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "openai"}})).To(Succeed())
		newRouter(ns, "both", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", "rt-vllm"), externalBackend("cloud", "openai")}
			r.Spec.DefaultRoute = ptr.To("local")
		})
		// Two InferenceServices share Model big's claim and ask for different sizes: the claim keeps
		// the larger, which the plan reads from the live claim. The smaller one comes once the
		// claim exists (an unbound claim cannot grow).
		newModel(ns, "big", nil)
		refISVC(ns, "ref-big", "big", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("10Gi"))}
		})
		newRouter(ns, "external-only", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{externalBackend("cloud", "")}
			r.Spec.DefaultRoute = ptr.To("cloud")
		})
		targets := []string{"isvc/tinyllama", "isvc/qwen", "isvc/rt-vllm", "isvc/rt-tgi", "isvc/rt-sglang", "isvc/rt-generic",
			"isvc/ref-ephemeral", "isvc/ref-claim", "isvc/ref-big", "isvc/inline-cached", "isvc/scaled", "isvc/gw", "isvc/gw-gone",
			"isvc/taken", "mr/router", "mr/both", "mr/external-only"}

		By("the operator converges, then stops")
		op := startOperator(ns, cfg)
		converged(ns, targets)
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "big-model-cache"}, &corev1.PersistentVolumeClaim{})
		}).Should(Succeed())
		refISVC(ns, "ref-small", "big", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("5Gi"))}
		})
		targets = append(targets, "isvc/ref-small")
		// An autoscaler stand-in takes spec.replicas of the autoscaled Deployment; the operator then
		// leaves the field to it, which its plan reads from the live Deployment.
		_, err := kubectl("", "scale", "deployment", "scaled", "-n", ns, "--replicas=3")
		Expect(err).NotTo(HaveOccurred())
		touch(ns, "scaled")
		converged(ns, targets)
		op.stop()
		Expect(deployment(ns, "scaled").Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))

		By("the plugin's plan equals what was applied: nothing to do, exit 0; a refusal stays, exit 1")
		expectConverged := func(t string) {
			doc, code := planOf(ns, t, flags...)
			actions := actionsOf(doc)
			if t == "isvc/taken" {
				Expect(actions).To(HaveKeyWithValue("Service/taken", "refused"), "%v", doc)
				delete(actions, "Service/taken")
			}
			for k, a := range actions {
				Expect(a).To(Equal("unchanged"), "%s: %s would be %sd by a converged operator:\n%v", t, k, a, doc)
			}
			if t == "isvc/taken" {
				Expect(code).To(Equal(1), "a refusal is a difference worth attention [P10]")
				return
			}
			Expect(code).To(Equal(0), t)
		}
		for _, t := range targets {
			expectConverged(t)
		}

		By("the comparison notices each input the plugin could leave out")
		expectEveryInputMatters(ns, cfg.RouterProxyImage, []inputCase{
			{input: "the Model (spec.modelRef)", target: "isvc/qwen", isvc: func(o *inferenceservice.Observed, _ *inferenceservice.Flags) { o.Model = nil }},
			{input: "the Model of a modelRef InferenceService with its own cache claim", target: "isvc/ref-claim", isvc: func(o *inferenceservice.Observed, _ *inferenceservice.Flags) { o.Model = nil }},
			{input: "the Model's live cache claim", target: "isvc/ref-small", isvc: func(o *inferenceservice.Observed, _ *inferenceservice.Flags) { o.Claim = nil }},
			{input: "the live Deployment", target: "isvc/scaled", isvc: func(o *inferenceservice.Observed, _ *inferenceservice.Flags) { o.Deployment = nil }},
			{input: "which Gateway API kinds are served", target: "isvc/gw", isvc: func(o *inferenceservice.Observed, _ *inferenceservice.Flags) {
				o.GatewayCRDsMissing = []schema.GroupVersionKind{inferenceservice.InferencePoolKind, inferenceservice.HTTPRouteKind}
			}},
			{input: "--emit-scrape-annotations", target: "isvc/rt-vllm", isvc: func(_ *inferenceservice.Observed, f *inferenceservice.Flags) { f.EmitScrapeAnnotations = false }},
			{input: "--field-manager", target: "isvc/rt-tgi", isvc: func(_ *inferenceservice.Observed, f *inferenceservice.Flags) { f.FieldManager = "someone-else" }},
			{input: "the backends' InferenceServices", target: "mr/both", router: func(o *modelrouter.Observed, _ *modelrouter.Flags) {
				o.Found.InferenceServices = map[string]*inferencev1alpha1.InferenceService{}
			}},
			{input: "the backends' credentials Secrets", target: "mr/both", router: func(o *modelrouter.Observed, _ *modelrouter.Flags) { o.Found.Secrets = map[string]bool{} }},
			{input: "--router-proxy-image", target: "mr/external-only", router: func(_ *modelrouter.Observed, f *modelrouter.Flags) { f.Image = "" }},
			{input: "--emit-scrape-annotations", target: "mr/router", router: func(_ *modelrouter.Observed, f *modelrouter.Flags) { f.EmitScrapeAnnotations = false }},
		})
		By("and so does the plugin itself: without the operator's flags it reports a change, exit 1")
		for _, t := range []string{"isvc/rt-vllm", "mr/both"} {
			_, code := planOf(ns, t)
			Expect(code).To(Equal(1), "%s planned without the operator's flags", t)
		}

		By("a spec change with the operator stopped: diff says what will change, exit 1")
		stale := map[string]client.Object{}
		for _, t := range []string{"isvc/rt-vllm", "mr/both"} {
			var o client.Object = &inferencev1alpha1.InferenceService{}
			if t[:3] == "mr/" {
				o = &inferencev1alpha1.ModelRouter{}
			}
			_, name, _ := strings.Cut(t, "/")
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, o)).To(Succeed())
			stale[t] = o
		}
		for _, t := range targets {
			if t[:3] == "mr/" {
				editRouter(ns, t[3:], func(r *inferencev1alpha1.ModelRouter) {
					if r.Spec.Proxy == nil {
						r.Spec.Proxy = &inferencev1alpha1.ProxySpec{}
					}
					r.Spec.Proxy.PodLabels = map[string]inferencev1alpha1.LabelValue{"drift": "changed"}
				})
				continue
			}
			editISVC(ns, t[5:], func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodLabels = map[string]inferencev1alpha1.LabelValue{"drift": "changed"}
				if i.Name == "gw-gone" {
					// The InferencePool and HTTPRoute are then deleted [P9].
					i.Spec.Gateway = nil
				}
			})
		}
		before := snapshot(ns)
		predicted := map[string]string{} // kind/name -> the plugin's unified diff
		refused := map[string]string{}   // kind/name -> the refusal
		for _, t := range targets {
			doc, code := planOf(ns, t, flags...)
			Expect(code).To(Equal(1), t)
			for _, o := range doc.Objects {
				switch o.Action {
				case "unchanged":
				case "refused":
					refused[o.Kind+"/"+o.Name] = o.Refused
				default:
					predicted[o.Kind+"/"+o.Name] = o.Diff
				}
			}
		}
		Expect(predicted).NotTo(BeEmpty())
		Expect(predicted).To(And(HaveKey("InferencePool/gw-gone"), HaveKey("HTTPRoute/gw-gone")), "a removed spec.gateway's deletions are in the diff [P9]")
		Expect(refused).To(HaveLen(1))
		Expect(refused).To(HaveKeyWithValue("Service/taken", ContainSubstring("no controller")), "a refused Service is shown as refused, never as a change [P10]")
		By("the object itself is an input: planned from the object as it was, the change goes unseen")
		for t, o := range stale {
			var now, then planned
			var err error
			if isvc, ok := o.(*inferencev1alpha1.InferenceService); ok {
				now, err = isvcPlan(ns, isvc.Name, nil)
				Expect(err).NotTo(HaveOccurred())
				then, err = isvcPlan(ns, isvc.Name, func(obs *inferenceservice.Observed, _ *inferenceservice.Flags) { obs.ISVC = isvc })
			} else {
				router := o.(*inferencev1alpha1.ModelRouter)
				now, err = routerPlan(ns, router.Name, cfg.RouterProxyImage, nil)
				Expect(err).NotTo(HaveOccurred())
				then, err = routerPlan(ns, router.Name, cfg.RouterProxyImage, func(obs *modelrouter.Observed, _ *modelrouter.Flags) { obs.Router = router })
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(differences(now, keysOf(now))).NotTo(BeEmpty(), t)
			Expect(differences(then, keysOf(now))).To(BeEmpty(), "%s: planned from the stale object the comparison still sees the change", t)
		}

		By("the operator then changes exactly those objects, exactly as shown")
		op = startOperator(ns, cfg)
		eventuallyDeployment(ns, "gw", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("drift", "changed"))
		})
		eventually(ns, "both-router-proxy", &appsv1.Deployment{}, func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("drift", "changed"))
		})
		converged(ns, targets)
		op.stop()
		after := snapshot(ns)
		changed := map[string]string{}
		for k, v := range after {
			if before[k] != v {
				changed[k] = renderedDiff(before[k], v, k, ns)
			}
		}
		for k, v := range before {
			if _, ok := after[k]; !ok {
				kind, name, _ := cutSlash(k)
				changed[k] = unifiedDiff(v, "", "live/"+kind+"/"+ns+"/"+name, "/dev/null")
			}
		}
		Expect(sortedKeys(changed)).To(Equal(sortedKeys(predicted)))
		for k := range changed {
			Expect(predicted[k]).To(Equal(changed[k]), "%s: the plugin's diff is not what the operator did:\n%s", k, cmp.Diff(changed[k], predicted[k]))
		}
		for _, t := range targets {
			expectConverged(t)
		}
	})
})

// converged waits until the operator wrote the status of every target's current generation (so
// every object of it was applied), then until it reconciles no more.
func converged(ns string, targets []string) {
	for _, t := range targets {
		kind, name, _ := strings.Cut(t, "/")
		var obj client.Object = &inferencev1alpha1.InferenceService{}
		if kind == "mr" {
			obj = &inferencev1alpha1.ModelRouter{}
		}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: name}, obj)).To(Succeed())
			var observed int64
			switch o := obj.(type) {
			case *inferencev1alpha1.InferenceService:
				observed = o.Status.ObservedGeneration
			case *inferencev1alpha1.ModelRouter:
				observed = o.Status.ObservedGeneration
			}
			g.Expect(observed).To(Equal(obj.GetGeneration()), t)
		}).WithTimeout(30 * time.Second).Should(Succeed())
	}
	settle(isvcController, reconciles(isvcController), 0)
	settle(routerController, reconciles(routerController), 0)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// renderedDiff is the unified diff the plugin prints for an object that went from a to b.
func renderedDiff(a, b, kindName, ns string) string {
	kind, name, _ := cutSlash(kindName)
	from := "live/" + kind + "/" + ns + "/" + name
	if a == "" {
		from = "/dev/null"
	}
	return unifiedDiff(a, b, from, "applied/"+kind+"/"+ns+"/"+name)
}

func cutSlash(s string) (string, string, bool) {
	return strings.Cut(s, "/")
}

func unifiedDiff(a, b, from, to string) string {
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(a), B: difflib.SplitLines(b), FromFile: from, ToFile: to, Context: 3})
	Expect(err).NotTo(HaveOccurred())
	return out
}

// The drifts a preview built beside the reconciler had, each reproduced on the converged operator.
var _ = Describe("one plan: the reproduced drifts of the old preview", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("a modelRef InferenceService: diff plans the --hf-repo args the operator applied", func() {
		op := startOperator(ns, controllers.Config{})
		newModel(ns, "gguf", func(m *inferencev1alpha1.Model) {
			m.Spec.Source = "org/repo"
			m.Spec.Format = inferencev1alpha1.ModelFormatGGUF
			m.Spec.Files = []string{"model.gguf"}
		})
		refISVC(ns, "ref", "gguf", inferencev1alpha1.RuntimeLlamaCPP, nil)
		eventuallyDeployment(ns, "ref", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--hf-repo"))
		})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()
		doc, code := planOf(ns, "isvc/ref")
		Expect(actionsOf(doc)).To(HaveKeyWithValue("Deployment/ref", "unchanged"), "%v", doc)
		Expect(code).To(Equal(0))
	})

	It("a missing Model: diff plans no Deployment and no claim, and says the Model is missing [P4]", func() {
		op := startOperator(ns, controllers.Config{})
		refISVC(ns, "orphan", "nowhere", inferencev1alpha1.RuntimeVLLM, nil)
		Eventually(func(g Gomega) {
			i := &inferencev1alpha1.InferenceService{}
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "orphan"}, i)).To(Succeed())
			g.Expect(i.Status.ObservedGeneration).To(Equal(i.Generation))
		}).Should(Succeed())
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()

		By("the conditions agree: Ready and Progressing say why, and nothing routes traffic to it")
		i := &inferencev1alpha1.InferenceService{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "orphan"}, i)).To(Succeed())
		for _, t := range []string{inferencev1alpha1.ConditionReady, inferencev1alpha1.ConditionProgressing, inferencev1alpha1.ConditionModelResolved} {
			c := meta.FindStatusCondition(i.Status.Conditions, t)
			Expect(c).NotTo(BeNil(), t)
			Expect(c.Status).To(Equal(metav1.ConditionFalse), t)
			Expect(c.Reason).To(Equal(inferenceservice.ReasonModelNotFound), t)
			Expect(c.Message).To(ContainSubstring("Model nowhere does not exist"), t)
		}
		Expect(i.Status.Endpoint).To(BeEmpty())
		Expect(i.Status.Phase).To(Equal(inferencev1alpha1.PhasePending))
		Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "orphan"}, &corev1.Service{}))).To(BeTrue(), "no Service is published")

		doc, code := planOf(ns, "isvc/orphan")
		Expect(actionsOf(doc)).NotTo(HaveKey("Deployment/orphan"))
		Expect(actionsOf(doc)).NotTo(HaveKey("PersistentVolumeClaim/nowhere-model-cache"))
		Expect(doc.Blocked).To(ContainSubstring("Model nowhere does not exist"))
		Expect(code).To(Equal(0))
		text, _, _ := llmkube("diff", "isvc/orphan", "-n", ns)
		Expect(text).To(ContainSubstring("Model nowhere does not exist"))
		_, stderr, code := llmkube("owners", "isvc", "orphan", "-n", ns)
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("Model nowhere does not exist"), "a missing Model is reported as that, not as a stopped operator")
		_, stderr, code = llmkube("owners", "isvc", "orphan", "-n", ns, "-o", "wide")
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("-o wide is not supported"))
	})

	It("a router: diff plans the operator's --router-proxy-image, ServiceAccount, Role and RoleBinding", func() {
		image := "registry.example.com/router-proxy:custom"
		op := startOperator(ns, controllers.Config{RouterProxyImage: image})
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{externalBackend("cloud", "")}
			r.Spec.DefaultRoute = ptr.To("cloud")
		})
		eventually(ns, "r-router-proxy", &appsv1.Deployment{}, func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		})
		settle(routerController, reconciles(routerController), 0)
		op.stop()
		doc, code := planOf(ns, "mr/r", "--router-proxy-image", image)
		Expect(actionsOf(doc)).To(Equal(map[string]string{
			"ServiceAccount/r-router-proxy": "unchanged", "Role/r-router-proxy": "unchanged", "RoleBinding/r-router-proxy": "unchanged",
			"ConfigMap/r-router-proxy": "unchanged", "Deployment/r-router-proxy": "unchanged", "Service/r-router-proxy": "unchanged",
		}))
		Expect(code).To(Equal(0))
	})

	It("a stray container left by kubectl patch --type merge: diff reports no change, as the operator makes none", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "s", nil)
		eventuallyDeployment(ns, "s", func(Gomega, *appsv1.Deployment) {})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()

		d := deployment(ns, "s")
		containers := []any{map[string]any{"name": "stray", "image": "busybox:1"}}
		for _, c := range d.Spec.Template.Spec.Containers {
			containers = append(containers, c)
		}
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": containers}}}})
		Expect(err).NotTo(HaveOccurred())
		_, err = kubectl("", "patch", "deployment", "s", "-n", ns, "--type", "merge", "-p", string(patch))
		Expect(err).NotTo(HaveOccurred())
		rv := deployment(ns, "s").ResourceVersion

		doc, code := planOf(ns, "isvc/s")
		Expect(actionsOf(doc)).To(HaveKeyWithValue("Deployment/s", "unchanged"), "%v", doc)
		Expect(code).To(Equal(0))

		By("the operator indeed leaves the Deployment as it is")
		startOperator(ns, controllers.Config{})
		touch(ns, "s")
		settle(isvcController, reconciles(isvcController), 1)
		Expect(deployment(ns, "s").ResourceVersion).To(Equal(rv))
	})
})
