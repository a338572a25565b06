/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// The upgrade a LLMKube user makes: LLMKube v0.9.19's real operator (its binary, its CRDs, its
// samples, as ../shared/peers/llmkube/build.sh builds them) converges the samples on a control
// plane of its own; it is stopped, this project's CRDs are installed over LLMKube's, and this
// operator starts. Where the shared folder is absent the spec is skipped (llmkubePeer says so):
// this machine reaches no GitHub to clone tag v0.9.19 from.
var _ = Describe("Upgrade from LLMKube v0.9.19's real operator", func() {
	It("leaves each model Deployment with exactly the containers, init containers, volumes and GPU requests this operator plans, with every status written and kubectl scale working", func() {
		peer := llmkubePeer()
		own, err := testenv.New()
		Expect(err).NotTo(HaveOccurred())
		own.CRDDirectoryPaths = []string{filepath.Join(peer, "crd")}
		ownCfg, err := own.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(own.Stop()).To(Succeed()) })
		c, err := client.New(ownCfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		dir := GinkgoT().TempDir()
		kubeconfig := writeKubeconfig(own, envtest.User{Name: "upgrade-admin", Groups: []string{"system:masters"}}, dir)
		at := func(stdin string, args ...string) (string, error) { return kubectlAt(kubeconfig, stdin, args...) }

		By("LLMKube's samples applied under LLMKube's CRDs, each file in a namespace of its own")
		nsOf := map[string]string{}
		var namespaces []string
		for i, d := range llmkubeSamples(peer) {
			if d.obj.GroupVersionKind().Group != inferencev1alpha1.GroupVersion.Group || !servedSampleKinds[d.obj.GetKind()] {
				continue
			}
			ns, ok := nsOf[d.file]
			if !ok {
				ns = fmt.Sprintf("upgrade-%d", i)
				nsOf[d.file] = ns
				namespaces = append(namespaces, ns)
				Expect(c.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			}
			d.obj.SetNamespace(ns)
			data, err := json.Marshal(d.obj.Object)
			Expect(err).NotTo(HaveOccurred())
			_, err = at(string(data), "apply", "--server-side", "--field-manager=gitops", "-f", "-")
			Expect(err).NotTo(HaveOccurred(), d.file)
		}

		By("LLMKube's operator, run until its Deployments stop changing, then stopped")
		logPath := filepath.Join(dir, "llmkube-manager.log")
		logFile, err := os.Create(logPath)
		Expect(err).NotTo(HaveOccurred())
		manager := exec.Command(filepath.Join(peer, "manager"), "--metrics-bind-address=127.0.0.1:0", "--metrics-secure=false",
			"--health-probe-bind-address=127.0.0.1:0", "--leader-elect=false", "--model-cache-path="+filepath.Join(dir, "cache"))
		manager.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		manager.Stdout, manager.Stderr = logFile, logFile
		Expect(manager.Start()).To(Succeed())
		stopped := false
		stop := func() {
			if stopped {
				return
			}
			stopped = true
			_ = manager.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- manager.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = manager.Process.Kill()
				<-done
			}
			_ = logFile.Close()
		}
		DeferCleanup(stop)
		before := map[string]appsv1.Deployment{}
		var lastChange time.Time
		fingerprint := ""
		Eventually(func(g Gomega) {
			deployments := modelDeployments(g, c, namespaces)
			var keys []string
			for _, d := range deployments {
				keys = append(keys, fmt.Sprintf("%s/%s@%d", d.Namespace, d.Name, d.Generation))
			}
			sort.Strings(keys)
			if f := strings.Join(keys, ","); f != fingerprint || lastChange.IsZero() {
				fingerprint, lastChange = f, time.Now()
			}
			g.Expect(deployments).NotTo(BeEmpty(), "LLMKube's operator created no Deployment; its log: %s", logPath)
			g.Expect(time.Since(lastChange)).To(BeNumerically(">", 15*time.Second), "LLMKube's Deployments still change")
			for _, d := range deployments {
				before[d.Namespace+"/"+d.Name] = d
			}
		}).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(Succeed())
		stop()
		gpusBefore := 0
		for _, d := range before {
			gpusBefore += templateGPUs(&d.Spec.Template)
		}
		GinkgoWriter.Printf("LLMKube's operator converged: %d model Deployments, %d GPUs requested\n", len(before), gpusBefore)

		By("this project's CRDs installed over LLMKube's, as helm upgrade does, and this operator started")
		crds, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, f := range crds {
			_, err := at("", "apply", "--server-side", "--force-conflicts", "--field-manager=helm", "-f", f)
			Expect(err).NotTo(HaveOccurred())
		}
		_, err = at("", "wait", "--for=condition=Established", "--timeout=60s", "crd/inferenceservices.inference.llmkube.dev", "crd/models.inference.llmkube.dev", "crd/modelrouters.inference.llmkube.dev")
		Expect(err).NotTo(HaveOccurred())

		By("kubectl llmkube migration plan names, before the operator starts, each LLMKube container, init container and volume the upgrade removes, and the roll")
		out, stderr, code := llmkubeAs(kubeconfig, "migration", "plan", "-A", "-o", "json")
		Expect(code).To(Equal(0), stderr)
		var preview struct {
			Plans []struct {
				Namespace string      `json:"namespace"`
				Kind      string      `json:"kind"`
				Name      string      `json:"name"`
				Outcome   planOutcome `json:"outcome"`
			} `json:"plans"`
		}
		Expect(json.Unmarshal([]byte(out), &preview)).To(Succeed())
		predicted := map[string]planOutcome{}
		for _, p := range preview.Plans {
			if p.Kind == "Deployment" {
				predicted[p.Namespace+"/"+p.Name] = p.Outcome
			}
		}
		removed := 0
		for k, d := range before {
			isvc := &inferencev1alpha1.InferenceService{}
			Expect(c.Get(suiteCtx, client.ObjectKeyFromObject(&d), isvc)).To(Succeed())
			want := plannedTemplate(Default, c, isvc, &d)
			o, ok := predicted[k]
			Expect(ok).To(BeTrue(), "migration plan has no row for Deployment %s", k)
			for list, names := range map[string][]string{
				"containers":     containerNames(d.Spec.Template.Spec.Containers),
				"initContainers": containerNames(d.Spec.Template.Spec.InitContainers),
				"volumes":        volumeNames(d.Spec.Template.Spec.Volumes),
			} {
				for _, n := range names {
					if slices.Contains(want.names[list], n) {
						continue
					}
					removed++
					item := fmt.Sprintf(`field:spec.template.spec.%s[name=%q]`, list, n)
					Expect(o.Pruned).To(ContainElement(HavePrefix(item)), "%s: the plan names the removal of %s", k, item)
				}
			}
		}
		GinkgoWriter.Printf("migration plan: %d LLMKube containers, init containers and volumes removed, each named in its table\n", removed)
		startOperatorWith(operatorOptions{restConfig: ownCfg, namespaces: namespaces, cfg: controllers.Config{}})

		By("each model Deployment becomes exactly the one this operator plans: no LLMKube container, init container or volume left beside it")
		rolled, gpusAfter := 0, 0
		keys := make([]string, 0, len(before))
		for k := range before {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			old := before[k]
			var got appsv1.Deployment
			Eventually(func(g Gomega) {
				isvc := &inferencev1alpha1.InferenceService{}
				g.Expect(c.Get(suiteCtx, client.ObjectKey{Namespace: old.Namespace, Name: old.Name}, isvc)).To(Succeed())
				g.Expect(isvc.Status.ObservedGeneration).To(Equal(isvc.Generation), "the InferenceService's status is written")
				g.Expect(c.Get(suiteCtx, client.ObjectKeyFromObject(&old), &got)).To(Succeed())
				want := plannedTemplate(g, c, isvc, &got)
				g.Expect(containerNames(got.Spec.Template.Spec.Containers)).To(Equal(want.names["containers"]), "containers")
				g.Expect(containerNames(got.Spec.Template.Spec.InitContainers)).To(Equal(want.names["initContainers"]), "init containers")
				g.Expect(volumeNames(got.Spec.Template.Spec.Volumes)).To(Equal(want.names["volumes"]), "volumes")
				g.Expect(templateGPUs(&got.Spec.Template)).To(Equal(want.gpus), "GPU requests")
			}).WithTimeout(time.Minute).Should(Succeed(), k)
			rolls := !equality.Semantic.DeepEqual(old.Spec.Template, got.Spec.Template)
			Expect(predicted[k].Rolls).To(Equal(rolls), "%s: migration plan said rolls=%v", k, predicted[k].Rolls)
			if rolls {
				rolled++
			}
			gpusAfter += templateGPUs(&got.Spec.Template)
		}
		GinkgoWriter.Printf("upgrade from LLMKube's operator: %d of %d model pod templates changed (pods rolled); GPUs requested %d before, %d after\n",
			rolled, len(before), gpusBefore, gpusAfter)
		Expect(gpusAfter).To(BeNumerically("<=", gpusBefore), "the upgrade never asks for more GPUs than the pods had")

		By("every Model and ModelRouter LLMKube's operator stored gets its status written (none is refused a write)")
		for _, ns := range namespaces {
			Eventually(func(g Gomega) {
				models := &inferencev1alpha1.ModelList{}
				g.Expect(c.List(suiteCtx, models, client.InNamespace(ns))).To(Succeed())
				for _, m := range models.Items {
					g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation), "Model %s/%s", ns, m.Name)
				}
				routers := &inferencev1alpha1.ModelRouterList{}
				g.Expect(c.List(suiteCtx, routers, client.InNamespace(ns))).To(Succeed())
				for _, r := range routers.Items {
					g.Expect(r.Status.ObservedGeneration).To(Equal(r.Generation), "ModelRouter %s/%s", ns, r.Name)
				}
			}).WithTimeout(time.Minute).Should(Succeed())
		}

		By("every stored InferenceService takes kubectl scale")
		for _, k := range keys {
			_, err := at("", "scale", "-n", before[k].Namespace, "inferenceservice/"+before[k].Name, "--replicas=2")
			Expect(err).NotTo(HaveOccurred(), k)
		}
	})
})

// modelDeployments are the Deployments of namespaces that an InferenceService controls.
func modelDeployments(g Gomega, c client.Client, namespaces []string) []appsv1.Deployment {
	var out []appsv1.Deployment
	for _, ns := range namespaces {
		list := &appsv1.DeploymentList{}
		g.Expect(c.List(suiteCtx, list, client.InNamespace(ns))).To(Succeed())
		for _, d := range list.Items {
			if ref := metav1.GetControllerOf(&d); ref != nil && ref.Kind == "InferenceService" {
				out = append(out, d)
			}
		}
	}
	return out
}

func isGPU(name corev1.ResourceName) bool {
	return strings.HasSuffix(string(name), "/gpu") || name == inferenceservice.DRIRenderResource
}

// templateGPUs is the GPUs the containers of t ask for (their limits, as device plugins read them).
func templateGPUs(t *corev1.PodTemplateSpec) int {
	n := 0
	for _, ctr := range t.Spec.Containers {
		for name, q := range ctr.Resources.Limits {
			if isGPU(name) {
				n += int(q.Value())
			}
		}
	}
	return n
}

func containerNames(cs []corev1.Container) []string {
	names := []string{}
	for _, c := range cs {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names
}

// plannedPod is what the operator's plan puts in a model pod template.
type plannedPod struct {
	names map[string][]string // containers, initContainers, volumes: sorted names
	gpus  int
}

// plannedTemplate is the pod template the operator's plan (the one the reconciler applies) has for
// isvc when live is its Deployment.
func plannedTemplate(g Gomega, c client.Client, isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment) plannedPod {
	obs, err := inferenceservice.Observe(suiteCtx, c, isvc)
	g.Expect(err).NotTo(HaveOccurred())
	p, err := inferenceservice.PlanFor(obs, inferenceservice.Flags{FieldManager: ownership.DefaultFieldManager})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.HasDeployment()).To(BeTrue(), "LLMKube served %s/%s; this operator plans no Deployment for it (%s)", isvc.Namespace, isvc.Name, p.Blocked)
	ac, err := p.Deployment(live, ownership.DefaultFieldManager)
	g.Expect(err).NotTo(HaveOccurred())
	data, err := json.Marshal(ac)
	g.Expect(err).NotTo(HaveOccurred())
	d := &appsv1.Deployment{}
	g.Expect(json.Unmarshal(data, d)).To(Succeed())
	spec := d.Spec.Template.Spec
	return plannedPod{
		names: map[string][]string{"containers": containerNames(spec.Containers), "initContainers": containerNames(spec.InitContainers),
			"volumes": volumeNames(spec.Volumes)},
		gpus: templateGPUs(&d.Spec.Template),
	}
}

func volumeNames(vs []corev1.Volume) []string {
	names := []string{}
	for _, v := range vs {
		names = append(names, v.Name)
	}
	slices.Sort(names)
	return names
}
