/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/llmkube/operator/test/envtest/testenv"
)

// The suite shares one control plane; each spec works in its own namespace.
var (
	env       *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	suiteCtx  context.Context
	cancel    context.CancelFunc
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "integration suite (real kube-apiserver and etcd)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// CI runs on 2 shared cores: give asynchronous effects (Events, watches) room; a hot loop or
	// a missing write still fails, only later.
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	suiteCtx, cancel = context.WithCancel(context.Background())

	var err error
	env, err = testenv.New()
	Expect(err).NotTo(HaveOccurred())
	// The Gateway API CRDs the gateway specs need; the spec of missing CRDs has a control plane
	// of its own.
	gatewayCRDs, err := testenv.GatewayCRDs()
	Expect(err).NotTo(HaveOccurred())
	env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, gatewayCRDs...)
	cfg, err = env.Start()
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
