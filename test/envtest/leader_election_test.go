/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
)

// leaseName is the operator's leader-election ID (cmd/operator).
const leaseName = "llmkube-operator.inference.llmkube.dev"

// Two operator binaries run from outside a cluster (a laptop, a CI job) against one API server,
// as the chart's replicas do inside it.
var _ = Describe("Leader election outside a cluster", Ordered, func() {
	var binary string
	BeforeAll(func() {
		var err error
		binary, err = gexec.Build("github.com/llmkube/operator/cmd/operator")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(gexec.CleanupBuildArtifacts)
	})

	// start runs the operator binary with args, as a process outside any pod: no POD_NAMESPACE, no
	// service account mount.
	start := func(args ...string) *gexec.Session {
		cmd := exec.Command(binary, append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}, args...)...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "POD_NAMESPACE=") && !strings.HasPrefix(kv, "KUBECONFIG=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "KUBECONFIG="+adminKubeconfig())
		s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { s.Terminate().Wait(10 * time.Second) })
		return s
	}

	It("elects one leader among two binaries given --leader-election-namespace: the Lease is there, the other waits and writes nothing [F3]", func() {
		ns := newNamespace()
		args := []string{"--leader-elect", "--leader-election-namespace=" + ns, "--watch-namespaces=" + ns}
		a := start(args...)
		Eventually(a.Err).WithTimeout(30 * time.Second).Should(gbytes.Say(`(?i)successfully acquired lease.*` + regexp.QuoteMeta(ns+"/"+leaseName)))
		b := start(args...)
		Eventually(b.Err).WithTimeout(30 * time.Second).Should(gbytes.Say(`(?i)attempting to acquire leader lease.*` + regexp.QuoteMeta(ns+"/"+leaseName)))

		lease := &coordinationv1.Lease{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		Expect(*lease.Spec.HolderIdentity).NotTo(BeEmpty())

		By("the leader reconciles; the other starts no controller")
		newISVC(ns, "llama", nil)
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "llama"}, &appsv1.Deployment{})
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(string(a.Err.Contents())).To(ContainSubstring("Starting workers"))
		Consistently(b).WithTimeout(2*time.Second).ShouldNot(gexec.Exit(), "the other replica waits")
		Expect(string(b.Err.Contents())).NotTo(MatchRegexp("(?i)successfully acquired lease"))
		Expect(string(b.Err.Contents())).NotTo(ContainSubstring("Starting workers"))
		current := &coordinationv1.Lease{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: leaseName}, current)).To(Succeed())
		Expect(*current.Spec.HolderIdentity).To(Equal(*lease.Spec.HolderIdentity), "the first replica still leads")
	})

	It("stops with an error that names --leader-election-namespace when --leader-elect has no namespace outside a cluster [F4]", func() {
		s := start("--leader-elect")
		Eventually(s).WithTimeout(30 * time.Second).Should(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(ContainSubstring("--leader-election-namespace"))
		Expect(string(s.Err.Contents())).NotTo(ContainSubstring("please specify LeaderElectionNamespace"))
	})
})
