/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/test/envtest/testenv"
	"github.com/llmkube/operator/test/helmtool"
)

// The chart on a control plane of its own with no CRDs: helm installs them, and the operator runs
// with exactly the chart's RBAC, as the chart's ServiceAccount, never as an admin.
var _ = Describe("Helm install", Ordered, func() {
	const (
		releaseNS = "llmkube-system"
		saName    = "llmkube" // the release's full name
	)
	var (
		plane      *envtest.Environment
		admin      client.Client
		kubeconfig string
	)

	BeforeAll(func() {
		plane = &envtest.Environment{Scheme: testenv.Scheme()}
		adminCfg, err := plane.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(plane.Stop)
		admin, err = client.New(adminCfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		kubeconfig = writeKubeconfig(plane, envtest.User{Name: "helm-admin", Groups: []string{"system:masters"}}, GinkgoT().TempDir())
	})

	It("installs the chart, establishes the CRDs, and the operator reconciles a sample under the chart's ServiceAccount [H1]", func() {
		start := time.Now()
		out, err := helmtool.Run("install", "llmkube", helmtool.Chart(), "--namespace", releaseNS, "--create-namespace",
			"--kubeconfig", kubeconfig, "--set", "leaderElection.enabled=true")
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("helm install took %s\n%s", time.Since(start), out)

		By("the CRDs are established")
		for _, name := range []string{"inferenceservices.inference.llmkube.dev", "modelrouters.inference.llmkube.dev", "models.inference.llmkube.dev"} {
			Eventually(func(g Gomega) {
				crd := &unstructured.Unstructured{}
				crd.SetAPIVersion("apiextensions.k8s.io/v1")
				crd.SetKind("CustomResourceDefinition")
				g.Expect(admin.Get(suiteCtx, types.NamespacedName{Name: name}, crd)).To(Succeed())
				conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
				established := false
				for _, c := range conds {
					m := c.(map[string]any)
					established = established || (m["type"] == "Established" && m["status"] == "True")
				}
				g.Expect(established).To(BeTrue(), "CRD %s not established", name)
			}).WithTimeout(30 * time.Second).Should(Succeed())
		}

		By("the operator runs as system:serviceaccount:" + releaseNS + ":" + saName + ", bound only by the chart")
		sa, err := plane.AddUser(envtest.User{
			Name:   "system:serviceaccount:" + releaseNS + ":" + saName,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNS},
		}, nil)
		Expect(err).NotTo(HaveOccurred())
		saCfg := sa.Config()
		saClient, err := client.New(saCfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		// The router watches Secrets' metadata (get/list/watch) to know when a credentials Secret
		// appears; it may never write one, and it is no admin.
		err = saClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNS, Name: "probe"}})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the ServiceAccount must not write Secrets (it is no admin): %v", err)
		err = saClient.List(suiteCtx, &corev1.NodeList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the ServiceAccount must not list Nodes (it is no admin): %v", err)

		mgr, err := ctrl.NewManager(saCfg, ctrl.Options{
			Scheme:                  testenv.Scheme(),
			Metrics:                 metricsserver.Options{BindAddress: "0"},
			LeaderElection:          true,
			LeaderElectionNamespace: releaseNS,
			LeaderElectionID:        "llmkube-operator.inference.llmkube.dev",
			Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(controllers.Setup(mgr, controllers.Config{FieldManager: ownership.DefaultFieldManager, MaxConcurrentReconciles: 2})).To(Succeed())
		ctx, cancelMgr := context.WithCancel(suiteCtx)
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			Expect(mgr.Start(ctx)).To(Succeed())
		}()
		DeferCleanup(func() { cancelMgr(); <-done })

		By("a sample InferenceService is reconciled end to end")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
		Expect(admin.Create(suiteCtx, ns)).To(Succeed())
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "inference_v1alpha1_inferenceservice.yaml"))
		Expect(err).NotTo(HaveOccurred())
		isvc := &inferencev1alpha1.InferenceService{}
		Expect(yaml.UnmarshalStrict(data, isvc)).To(Succeed())
		isvc.Namespace = ns.Name
		Expect(admin.Create(suiteCtx, isvc)).To(Succeed())
		key := client.ObjectKeyFromObject(isvc)

		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(admin.Get(suiteCtx, key, d)).To(Succeed())
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("team", "research"))
			g.Expect(admin.Get(suiteCtx, key, &corev1.Service{})).To(Succeed())
			got := &inferencev1alpha1.InferenceService{}
			g.Expect(admin.Get(suiteCtx, key, got)).To(Succeed())
			ready := meta.FindStatusCondition(got.Status.Conditions, inferencev1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil(), "no status written")
			g.Expect(ready.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.Endpoint).NotTo(BeEmpty())
		}).WithTimeout(30*time.Second).Should(Succeed(), "the operator, with only the chart's RBAC, did not reconcile the sample")

		By("the sample ModelRouter gets its proxy's ServiceAccount, Role and RoleBinding: RBAC lets the chart's ClusterRole grant endpointslices get/list/watch because it holds them")
		data, err = os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "inference_v1alpha1_modelrouter.yaml"))
		Expect(err).NotTo(HaveOccurred())
		router := &inferencev1alpha1.ModelRouter{}
		Expect(yaml.UnmarshalStrict(data, router)).To(Succeed())
		router.Namespace = ns.Name
		Expect(admin.Create(suiteCtx, router)).To(Succeed())
		proxyName := types.NamespacedName{Namespace: ns.Name, Name: router.Name + "-router-proxy"}
		Eventually(func(g Gomega) {
			role := &rbacv1.Role{}
			g.Expect(admin.Get(suiteCtx, proxyName, role)).To(Succeed())
			g.Expect(role.Rules).To(ConsistOf(HaveField("Resources", []string{"endpointslices"})))
			g.Expect(admin.Get(suiteCtx, proxyName, &rbacv1.RoleBinding{})).To(Succeed())
			g.Expect(admin.Get(suiteCtx, proxyName, &corev1.ServiceAccount{})).To(Succeed())
		}).WithTimeout(30*time.Second).Should(Succeed(), "the operator, with only the chart's RBAC, did not create the proxy's Role")

		By("the Model samples are reconciled too: the Model's status, its cache claim, the Deployment")
		for _, f := range []string{"inference_v1alpha1_model.yaml", "inference_v1alpha1_inferenceservice_modelref.yaml"} {
			data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", f))
			Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(data, &u.Object)).To(Succeed())
			u.SetNamespace(ns.Name)
			Expect(admin.Create(suiteCtx, u)).To(Succeed(), f)
		}
		Eventually(func(g Gomega) {
			m := &inferencev1alpha1.Model{}
			g.Expect(admin.Get(suiteCtx, types.NamespacedName{Namespace: ns.Name, Name: "qwen-0-5b"}, m)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(m.Status.Conditions, inferencev1alpha1.ConditionAccepted)).To(BeTrue())
			g.Expect(m.Status.UsedBy).To(ContainElement("qwen"))
			g.Expect(admin.Get(suiteCtx, types.NamespacedName{Namespace: ns.Name, Name: "qwen-0-5b-model-cache"}, &corev1.PersistentVolumeClaim{})).To(Succeed())
			g.Expect(admin.Get(suiteCtx, types.NamespacedName{Namespace: ns.Name, Name: "qwen"}, &appsv1.Deployment{})).To(Succeed())
		}).WithTimeout(30*time.Second).Should(Succeed(), "the operator, with only the chart's RBAC, did not reconcile the Model samples")

		By("no apply was rejected")
		events := &eventsv1.EventList{}
		Expect(admin.List(suiteCtx, events, client.InNamespace(ns.Name))).To(Succeed())
		for _, e := range events.Items {
			Expect(e.Reason).NotTo(Equal("ApplyFailed"), e.Note)
		}
	})
})
