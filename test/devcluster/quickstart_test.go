/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/test/docblocks"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// blockEnd separates the output of one documented block from the next in the one shell session
// that runs them all, so an `export` in one block holds for the next, as in a reader's shell.
const blockEnd = "@@llmkube-doc-block-end@@"

// runBlocks runs the blocks, in order, in one bash session in dir, and returns what each printed.
// env replaces nothing but KUBECONFIG (dropped, so the page's own export is what points kubectl at
// the cluster, unless env sets it) and PATH (the control plane's directory first, where `make
// envtest-bin` puts a kubectl).
func runBlocks(dir string, blocks []docblocks.Block, env ...string) []string {
	var script strings.Builder
	for _, b := range blocks {
		script.WriteString(b.Body + "\necho " + blockEnd + "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script.String())
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	outs := strings.Split(stdout.String(), blockEnd+"\n")
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "the documented commands failed after %d of %d blocks (the next is %s)\nstdout:\n%s\nstderr:\n%s",
		len(outs)-1, len(blocks), blocks[min(len(outs)-1, len(blocks)-1)], stdout.String(), stderr.String())
	return outs[:len(blocks)]
}

var (
	// Kubernetes' random suffixes (pod-template hash, pod name) use this alphabet.
	podName = regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	rsName  = regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{6,10}$`)
	age     = regexp.MustCompile(`^[0-9]+[smhd]([0-9]+[smh])?$`)
)

// comparable is kubectl's output as a page can promise it: random name suffixes and ages
// replaced, columns by single spaces (their width follows the names), blank lines dropped, lines
// sorted (kubectl sorts by name, and names carry the random suffixes).
func comparable(out string) []string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for i, f := range fields {
			switch {
			case age.MatchString(f):
				fields[i] = "<age>"
			case podName.MatchString(f):
				fields[i] = podName.ReplaceAllString(f, "$1-<hash>-<id>")
			case rsName.MatchString(f):
				fields[i] = rsName.ReplaceAllString(f, "$1-<hash>")
			}
		}
		lines = append(lines, strings.Join(fields, " "))
	}
	sort.Strings(lines)
	return lines
}

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
		samples, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(samples).NotTo(BeEmpty())
		for _, f := range samples {
			copyFile(f, filepath.Join(dir, "config", "samples", filepath.Base(f)))
		}
		copyFile(cluster.Kubeconfig, filepath.Join(dir, ".dev", "kubeconfig"))

		outs := runBlocks(dir, blocks)
		compared := 0
		for i, b := range blocks {
			if b.Output == nil {
				continue
			}
			compared++
			Expect(comparable(outs[i])).To(Equal(comparable(*b.Output)), "%s prints something else than the README shows:\n%s", b, outs[i])
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
		outs := runBlocks(testenv.RepoRoot(), blocks, "KUBECONFIG="+cluster.Kubeconfig)
		Expect(strings.Join(outs, "")).To(ContainSubstring("customresourcedefinition.apiextensions.k8s.io/inferencepools.inference.networking.k8s.io serverside-applied"))
		Expect(strings.Join(outs, "")).To(ContainSubstring("customresourcedefinition.apiextensions.k8s.io/httproutes.gateway.networking.k8s.io serverside-applied"))
	})
})
