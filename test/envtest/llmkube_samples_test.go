/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// llmkubePeer is the folder ../shared/peers/llmkube/build.sh fills with LLMKube v0.9.19's
// operator, CRDs and samples (built once, cached by version). Where the shared folder is absent
// the spec is skipped, saying so: the machine reaches no GitHub to clone the tag from.
func llmkubePeer() string {
	script, err := filepath.Abs("../../../shared/peers/llmkube/build.sh")
	Expect(err).NotTo(HaveOccurred())
	if _, err := os.Stat(script); err != nil {
		Skip("LLMKube v0.9.19 is not beside the project (" + script + "): the spec needs its samples and cannot clone them here")
	}
	out, err := exec.Command("bash", script).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		Fail("build.sh: " + string(exit.Stderr))
	}
	Expect(err).NotTo(HaveOccurred())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// sampleDoc is one document of LLMKube's samples.
type sampleDoc struct {
	file string
	obj  *unstructured.Unstructured
}

// llmkubeSamples are the documents of LLMKube's config/samples, every file but kustomization.yaml.
func llmkubeSamples(dir string) []sampleDoc {
	files, err := filepath.Glob(filepath.Join(dir, "samples", "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var docs []sampleDoc
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		r := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := r.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else {
				Expect(err).NotTo(HaveOccurred(), f)
			}
			if len(u.Object) > 0 {
				docs = append(docs, sampleDoc{file: filepath.Base(f), obj: u})
			}
		}
	}
	return docs
}

// The kinds of LLMKube's samples this operator serves: all of their documents apply unchanged.
var servedSampleKinds = map[string]bool{"InferenceService": true, "Model": true, "ModelRouter": true}

var _ = Describe("LLMKube v0.9.19's own samples", func() {
	It("apply unchanged under kubectl apply --server-side with strict validation, and each InferenceService is served or Stalled naming its unserved fields", func() {
		docs := llmkubeSamples(llmkubePeer())
		Expect(docs).NotTo(BeEmpty())

		By("every InferenceService, Model and ModelRouter document applies, each file in a namespace of its own as its manifests expect")
		nsOf := map[string]string{}
		var namespaces []string
		accepted, total := map[string]int{}, map[string]int{}
		var refused []string
		for _, d := range docs {
			kind := d.obj.GetKind()
			if d.obj.GroupVersionKind().Group != inferencev1alpha1.GroupVersion.Group || !servedSampleKinds[kind] {
				continue // ModelPool (issue 53), FederatedCluster, KEDA's HTTPScaledObject, plain Services and Secrets
			}
			ns, ok := nsOf[d.file]
			if !ok {
				ns = newNamespace()
				nsOf[d.file] = ns
				namespaces = append(namespaces, ns)
			}
			d.obj.SetNamespace(ns)
			data, err := json.Marshal(d.obj.Object)
			Expect(err).NotTo(HaveOccurred())
			total[kind]++
			if _, err := kubectl(string(data), "apply", "--server-side", "--field-manager=gitops", "--validate=strict", "-f", "-"); err != nil {
				refused = append(refused, d.file+" "+kind+"/"+d.obj.GetName()+": "+err.Error())
				continue
			}
			accepted[kind]++
		}
		GinkgoWriter.Printf("LLMKube samples accepted: %v of %v\n", accepted, total)
		Expect(refused).To(BeEmpty())
		Expect(total["InferenceService"]).To(BeNumerically(">=", 22))
		Expect(total["Model"]).To(BeNumerically(">=", 23))
		Expect(total["ModelRouter"]).To(BeNumerically(">=", 1))

		By("the operator serves each InferenceService, or reports Stalled=True naming what it does not serve")
		startOperatorWith(operatorOptions{namespaces: namespaces, cfg: controllers.Config{}})
		list := &inferencev1alpha1.InferenceServiceList{}
		Expect(k8sClient.List(suiteCtx, list)).To(Succeed())
		outcome := map[string][]string{}
		for _, isvc := range list.Items {
			if !slices.Contains(namespaces, isvc.Namespace) {
				continue
			}
			var stalled string
			Eventually(func(g Gomega) {
				got := &inferencev1alpha1.InferenceService{}
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&isvc), got)).To(Succeed())
				g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "observedGeneration")
				s := meta.FindStatusCondition(got.Status.Conditions, inferencev1alpha1.ConditionStalled)
				if s != nil && s.Status == "True" {
					g.Expect(s.Reason).To(BeElementOf(inferenceservice.ReasonUnservedField, inferenceservice.ReasonModelNotFound), s.Message)
					stalled = s.Reason + ": " + s.Message
					return
				}
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&isvc), &appsv1.Deployment{})).To(Succeed())
				stalled = ""
			}).WithTimeout(time.Minute).Should(Succeed(), isvc.Name)
			if stalled == "" {
				outcome["served"] = append(outcome["served"], isvc.Name)
			} else {
				outcome["stalled"] = append(outcome["stalled"], isvc.Name+" ("+stalled+")")
				Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&isvc), &appsv1.Deployment{})).To(
					WithTransform(apierrors.IsNotFound, BeTrue()), "a stalled plan creates no Deployment")
			}
		}
		for k := range outcome {
			sort.Strings(outcome[k])
		}
		GinkgoWriter.Printf("LLMKube sample InferenceServices served: %d, stalled: %d\n%s\n", len(outcome["served"]), len(outcome["stalled"]),
			strings.Join(outcome["stalled"], "\n"))
		Expect(outcome["served"]).NotTo(BeEmpty())

		By("each ModelRouter keeps every field it was given, and reports Stalled=UnservedField naming its policy and rules of LLMKube's form, with nothing applied")
		routers := &inferencev1alpha1.ModelRouterList{}
		Expect(k8sClient.List(suiteCtx, routers)).To(Succeed())
		seen := 0
		for _, mr := range routers.Items {
			if !slices.Contains(namespaces, mr.Namespace) {
				continue
			}
			seen++
			Eventually(func(g Gomega) {
				got := &inferencev1alpha1.ModelRouter{}
				g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&mr), got)).To(Succeed())
				g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "observedGeneration")
				s := meta.FindStatusCondition(got.Status.Conditions, inferencev1alpha1.ConditionStalled)
				g.Expect(s).NotTo(BeNil())
				g.Expect(s.Status).To(BeEquivalentTo("True"))
				g.Expect(s.Reason).To(Equal(modelrouter.ReasonUnservedField))
				g.Expect(s.Message).To(And(ContainSubstring("spec.policy"), ContainSubstring("route")), s.Message)
				r := meta.FindStatusCondition(got.Status.Conditions, inferencev1alpha1.ConditionReady)
				g.Expect(r).NotTo(BeNil())
				g.Expect(r.Reason).To(Equal(modelrouter.ReasonUnservedField))
			}).WithTimeout(time.Minute).Should(Succeed(), mr.Name)
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(inferencev1alpha1.GroupVersion.WithKind("ModelRouter"))
			Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&mr), stored)).To(Succeed())
			rules, _, _ := unstructured.NestedSlice(stored.Object, "spec", "rules")
			for _, rule := range rules {
				_, hasRoute := rule.(map[string]any)["route"]
				Expect(hasRoute).To(BeTrue(), "a rule of LLMKube's form keeps its route: %v", rule)
			}
			Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(&mr), &appsv1.Deployment{})).To(
				WithTransform(apierrors.IsNotFound, BeTrue()))
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: mr.Namespace, Name: mr.Name + "-router-proxy"}, &appsv1.Deployment{})).To(
				WithTransform(apierrors.IsNotFound, BeTrue()), "a stalled router applies no proxy")
		}
		Expect(seen).To(BeNumerically(">=", 1))
	})
})
