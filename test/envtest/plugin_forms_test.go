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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

// The plugin as kubectl users expect it: kubectl's ways to name objects and to print them, and
// a missing Model or backend said as such.
var _ = Describe("kubectl llmkube, as kubectl users expect it", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("owners takes kubectl's forms: TYPE NAME, several objects, -A with NAMESPACE and OBJECT columns, -o name; -o wide is refused [P6]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "a", nil)
		newISVC(ns, "b", nil)
		eventuallyDeployment(ns, "a", func(Gomega, *appsv1.Deployment) {})
		eventuallyDeployment(ns, "b", func(Gomega, *appsv1.Deployment) {})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()
		elsewhere := newNamespace()
		refISVC(elsewhere, "orphan", "nowhere", inferencev1alpha1.RuntimeVLLM, nil) // no operator there: no Deployment

		By("TYPE NAME NAME: one list of both, -o name the Deployments the rows are of")
		out, stderr, code := llmkube("owners", "isvc", "a", "b", "-n", ns, "-o", "name")
		Expect(code).To(Equal(0), stderr)
		Expect(out).To(Equal("deployment.apps/a\ndeployment.apps/b\n"))

		By("-A: every namespace, one table with NAMESPACE and OBJECT; an object without a Deployment is a note, not a failure")
		var all struct {
			Items []struct {
				Object    string      `json:"object"`
				Namespace string      `json:"namespace"`
				Notes     []string    `json:"notes"`
				Rows      []ownersRow `json:"rows"`
			} `json:"items"`
		}
		llmkubeJSON(&all, "owners", "-A")
		byObject := map[string]int{}
		for i, it := range all.Items {
			byObject[it.Namespace+"/"+it.Object] = i
		}
		Expect(byObject).To(HaveKey(ns + "/isvc/a"))
		Expect(byObject).To(HaveKey(ns + "/isvc/b"))
		Expect(byObject).To(HaveKey(elsewhere + "/isvc/orphan"))
		Expect(rowOf(all.Items[byObject[ns+"/isvc/a"]].Rows, "label", "app").Source).To(Equal("operator"))
		Expect(all.Items[byObject[elsewhere+"/isvc/orphan"]].Notes).To(ContainElement(ContainSubstring("Model nowhere does not exist")))
		table, stderr, code := llmkube("owners", "-A")
		Expect(code).To(Equal(0), stderr)
		Expect(table).To(MatchRegexp(`(?m)^NAMESPACE\s+OBJECT\s+PART\s+KEY\s+VALUE\s+SOURCE\s+OWNERS\s+FLAGS$`))
		Expect(table).To(MatchRegexp(`(?m)^` + ns + `\s+isvc/b\s+label\s+app\s+b\s+operator\s`))
		Expect(table).To(ContainSubstring("# " + elsewhere + "/isvc/orphan: Model nowhere does not exist"))
		names, stderr, code := llmkube("owners", "-A", "-o", "name")
		Expect(code).To(Equal(0), stderr)
		Expect(strings.Split(names, "\n")).To(ContainElements("deployment.apps/a", "deployment.apps/b"))

		By("named one by one, an object without a Deployment is an error that says why")
		_, stderr, code = llmkube("owners", "isvc/orphan", "-n", elsewhere)
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("isvc/orphan: Model nowhere does not exist"))
		Expect(stderr).NotTo(ContainSubstring("is the operator running"))

		By("-o wide is refused with what to use instead, never ignored; so is a missing target")
		_, stderr, code = llmkube("owners", "isvc/a", "-n", ns, "-o", "wide")
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("-o wide is not supported by owners: it has nothing wider than its default output; use -o json, -o yaml, -o name, or no -o"))
		_, stderr, code = llmkube("migration", "plan", "-n", ns, "-o", "wide")
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("-o wide is not supported by migration plan"))
		_, stderr, code = llmkube("owners", "-n", ns)
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("name what to explain, in one way: TYPE/NAME..., TYPE NAME... or -A"))
	})

	It("owners, diff and migration plan report a missing Model or backend as that, never as a stopped operator [P4]", func() {
		op := startOperator(ns, controllers.Config{})
		newModel(ns, "m", nil)
		refISVC(ns, "ref", "m", inferencev1alpha1.RuntimeVLLM, nil)
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, isvcBackend("gone", "missing"))
		})
		eventuallyDeployment(ns, "ref", func(Gomega, *appsv1.Deployment) {})
		eventually(ns, "r-router-proxy", &appsv1.Deployment{}, func(Gomega, *appsv1.Deployment) {})
		settle(isvcController, reconciles(isvcController), 0)
		op.stop()
		By("the Model is deleted after its Deployment was made: the operator leaves the Deployment as it is")
		Expect(k8sClient.Delete(suiteCtx, &inferencev1alpha1.Model{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"}})).To(Succeed())

		table, stderr, code := llmkube("owners", "isvc/ref", "-n", ns)
		Expect(code).To(Equal(0), stderr)
		Expect(table).To(ContainSubstring("# Model m does not exist in namespace " + ns))
		Expect(table).To(MatchRegexp(`label\s+app\s+ref\s+operator`), "who owns each key still holds")
		text, _, code := llmkube("diff", "isvc/ref", "-n", ns)
		Expect(code).To(BeNumerically("<", 2))
		Expect(text).To(ContainSubstring("# isvc/ref: Model m does not exist in namespace " + ns))
		plan, stderr, code := llmkube("migration", "plan", "-n", ns)
		Expect(code).To(Equal(0), stderr)
		Expect(plan).To(ContainSubstring("# " + ns + "/isvc/ref: Model m does not exist"))

		By("a router's missing backend")
		const note = `backend gone: InferenceService "missing" not found: the router routes nothing to it until it exists`
		table, stderr, code = llmkube("owners", "mr/r", "-n", ns)
		Expect(code).To(Equal(0), stderr)
		Expect(table).To(ContainSubstring("# " + note))
		text, _, code = llmkube("diff", "mr", "r", "-n", ns)
		Expect(code).To(BeNumerically("<", 2))
		Expect(text).To(ContainSubstring("# mr/r: " + note))
		for _, out := range []string{table, text, plan} {
			Expect(out).NotTo(ContainSubstring("is the operator running"))
		}
	})
})
