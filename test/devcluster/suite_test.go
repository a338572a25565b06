/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package devcluster_test checks the operator's promises on real pods: it starts the fuller
// cluster of `make run` (internal/devcluster: kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler and KWOK's fake GPU nodes), once for the suite, from the same code `make run`
// uses. The apiserver-only suite (test/envtest) stays apart, for speed.
package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/internal/devcluster"
	"github.com/llmkube/operator/test/envtest/testenv"
)

var (
	cluster   *devcluster.Cluster
	k8sClient client.Client
	cancel    context.CancelFunc
	done      chan struct{}
)

func TestDevCluster(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "dev cluster suite (controller-manager, scheduler, KWOK nodes)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// Rollouts go through three controllers, a scheduler and KWOK on 2 shared cores.
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)

	var err error
	// No skip when the binaries are missing: a run without them must fail, never pass empty.
	cluster, err = devcluster.Start(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases"), filepath.Join(GinkgoT().TempDir(), "kubeconfig"))
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cluster.Config, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	// The operator's wiring, as the binary runs it.
	cacheOpts, err := controllers.CacheOptions(controllers.CacheTransformSafe, nil)
	Expect(err).NotTo(HaveOccurred())
	mgr, err := ctrl.NewManager(cluster.Config, ctrl.Options{
		Scheme:  testenv.Scheme(),
		Cache:   cacheOpts,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(controllers.Setup(mgr, controllers.Config{FieldManager: ownership.DefaultFieldManager, MaxConcurrentReconciles: 2})).To(Succeed())
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
})

// failed is set by the first failing spec: the suite then prints the components' logs, which
// live in a temporary folder that goes with the run.
var failed bool

var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() {
		failed = true
	}
})

var _ = AfterSuite(func() {
	if failed && cluster != nil {
		for _, name := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
			data, _ := os.ReadFile(filepath.Join(cluster.LogDir, name+".log"))
			lines := strings.Split(string(data), "\n")
			fmt.Fprintf(GinkgoWriter, "=== last lines of %s.log\n%s\n", name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	}
	if cancel != nil {
		cancel()
		<-done
	}
	if cluster != nil {
		Expect(cluster.Stop()).To(Succeed())
	}
})
