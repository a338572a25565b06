/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/test/docblocks"
	"github.com/llmkube/operator/test/envtest/testenv"
)

func copyFile(from, to string) {
	data, err := os.ReadFile(from)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(filepath.Dir(to), 0o755)).To(Succeed())
	Expect(os.WriteFile(to, data, 0o600)).To(Succeed())
}

var _ = Describe("the docs, run as written against the cluster of make run", Ordered, func() {
	It("runs the README's quick start: the samples become Ready, a removed podLabel leaves the pods while another tool's label stays, and kubectl prints what the README shows [D3, O1, O2]", func() {
		blocks, err := docblocks.Runnable(filepath.Join(testenv.RepoRoot(), "README.md"), "quickstart")
		Expect(err).NotTo(HaveOccurred())

		// A reader's checkout, as far as the quick start touches it: the samples it edits, and the
		// kubeconfig `make run` writes to .dev/kubeconfig.
		dir := GinkgoT().TempDir()
		for _, sub := range []string{".", "local"} {
			samples, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", sub, "*.yaml"))
			Expect(err).NotTo(HaveOccurred())
			Expect(samples).NotTo(BeEmpty())
			for _, f := range samples {
				copyFile(f, filepath.Join(dir, "config", "samples", sub, filepath.Base(f)))
			}
		}
		copyFile(cluster.Kubeconfig, filepath.Join(dir, ".dev", "kubeconfig"))

		outs, err := docblocks.Run(dir, blocks)
		Expect(err).NotTo(HaveOccurred())
		compared := 0
		for i, b := range blocks {
			if b.Output == nil {
				continue
			}
			compared++
			Expect(docblocks.Comparable(outs[i])).To(Equal(docblocks.Comparable(*b.Output)), "%s prints something else than the README shows:\n%s", b, outs[i])
		}
		Expect(compared).To(BeNumerically(">=", 2), "the quick start shows the output of its first and last steps")

		// What the output shows, read back from the API server.
		list := &corev1.PodList{}
		Expect(k8sClient.List(context.Background(), list, client.InNamespace("default"), client.MatchingLabels{"app": "tinyllama"})).To(Succeed())
		Expect(list.Items).NotTo(BeEmpty())
		for _, p := range list.Items {
			Expect(p.Labels).NotTo(HaveKey("team"), "pod %s", p.Name)
			Expect(p.Labels).To(HaveKeyWithValue("mesh.example.com/injected", "true"), "pod %s", p.Name)
		}
	})

	It("installs the Gateway API CRDs with the commands docs/gateway.md shows", func() {
		blocks, err := docblocks.Runnable(filepath.Join(testenv.RepoRoot(), "docs", "gateway.md"), "gateway-crds")
		Expect(err).NotTo(HaveOccurred())
		outs, err := docblocks.Run(testenv.RepoRoot(), blocks, "KUBECONFIG="+cluster.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(outs, "")).To(ContainSubstring("customresourcedefinition.apiextensions.k8s.io/inferencepools.inference.networking.k8s.io serverside-applied"))
		Expect(strings.Join(outs, "")).To(ContainSubstring("customresourcedefinition.apiextensions.k8s.io/httproutes.gateway.networking.k8s.io serverside-applied"))
	})
})
