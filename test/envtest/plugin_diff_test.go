/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/llmkube/operator/controllers"
)

// manifestFile writes a manifest into the spec's temporary directory and returns its path.
func manifestFile(name, text string) string {
	path := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	return path
}

var _ = Describe("kubectl llmkube diff -f", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("[P7] shows what a GitOps tool's manifest removes: a dropped podLabel rolls the pods, a dropped spec.autoscaling deletes the HPA", func() {
		startOperator(ns, controllers.Config{})
		_, err := applyAs("argocd-controller", isvcManifest(ns, "llm", map[string]string{"team": "research", "tier": "gold"}))
		Expect(err).NotTo(HaveOccurred())
		eventuallyDeployment(ns, "llm", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("tier", "gold"))
		})
		eventuallyStatus(ns, "llm")
		withoutTier := manifestFile("llm.yaml", isvcManifest(ns, "llm", map[string]string{"team": "research"}))
		text, stderr, code := llmkube("diff", "-f", withoutTier)
		Expect(code).To(Equal(1), "a manifest without tier must not say 'no change'\n%s%s", text, stderr)
		Expect(text).To(MatchRegexp(`(?m)^-\s+tier: gold$`))

		By("spec.autoscaling dropped: the HPA the operator would delete is in the diff")
		auto := strings.Replace(isvcManifest(ns, "auto", map[string]string{"team": "research"}),
			"  replicas: 1\n", "  autoscaling:\n    minReplicas: 1\n    maxReplicas: 3\n", 1)
		_, err = applyAs("argocd-controller", auto)
		Expect(err).NotTo(HaveOccurred())
		eventually(ns, "auto", &autoscalingv2.HorizontalPodAutoscaler{}, func(g Gomega, h *autoscalingv2.HorizontalPodAutoscaler) {})
		eventuallyStatus(ns, "auto")
		out, stderr, code := llmkube("diff", "-f", manifestFile("auto.yaml", isvcManifest(ns, "auto", map[string]string{"team": "research"})), "-o", "name")
		Expect(code).To(Equal(1), "%s%s", out, stderr)
		Expect(out).To(ContainSubstring("horizontalpodautoscaler.autoscaling/auto"))
	})

	It("[P8] reads manifests as kubectl diff does: a flag error exits 2, -n must match the manifest, kind: List is read, a Model is skipped", func() {
		startOperator(ns, controllers.Config{})
		_, stderr, code := llmkube("diff", "--no-such-flag")
		Expect(code).To(Equal(2), "a flag error is an error, not 'differences'\n%s", stderr)

		other := newNamespace()
		_, stderr, code = llmkube("diff", "-f", manifestFile("b.yaml", isvcManifest(other, "elsewhere", nil)), "-n", ns)
		Expect(code).To(Equal(2), stderr)
		Expect(stderr).To(ContainSubstring("does not match the namespace"))

		item := strings.ReplaceAll(isvcManifest(ns, "listed", map[string]string{"team": "a"}), "\n", "\n  ")
		list := "apiVersion: v1\nkind: List\nitems:\n- " + strings.TrimSpace(item) + "\n"
		out, stderr, code := llmkube("diff", "-f", manifestFile("list.yaml", list), "-o", "name")
		Expect(code).To(Equal(1), "%s%s", out, stderr)
		Expect(out).To(ContainSubstring("deployment.apps/listed"))

		model := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: Model\nmetadata:\n  name: m\n  namespace: " + ns +
			"\nspec:\n  source: hf://Qwen/Qwen2.5-0.5B-Instruct\n---\n" + isvcManifest(ns, "withmodel", map[string]string{"team": "a"})
		out, stderr, code = llmkube("diff", "-f", manifestFile("model.yaml", model), "-o", "name")
		Expect(code).To(Equal(1), "%s%s", out, stderr)
		Expect(out).To(ContainSubstring("deployment.apps/withmodel"))
	})
})
