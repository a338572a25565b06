/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/runtimes"
)

// The churn spec's size and seed. LLMKUBE_CHURN_SEED replays a failure (the seed is printed
// with it); LLMKUBE_CHURN_STEPS runs longer locally.
const (
	churnDefaultSeed  = 20261130
	churnDefaultSteps = 300
	churnServices     = 50
	churnRouters      = 5
	churnRoundSteps   = 20
)

func envInt(name string, def int64) int64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		Expect(err).NotTo(HaveOccurred(), name)
		return n
	}
	return def
}

var (
	// Operator keys (inference.llmkube.dev/...) are refused at admission, so the churn never sets one.
	churnLabelKeys = []string{"team", "tier", "env", "example.com/owner"}
	churnAnnKeys   = []string{"example.com/a", "example.com/b", "example.com/c", inferenceservice.AnnotationDoNotDisrupt}
	churnValues    = []string{"a", "b", "c", "gold", "false"}
	churnRuntimes  = []inferencev1alpha1.Runtime{inferencev1alpha1.RuntimeLlamaCPP, inferencev1alpha1.RuntimeVLLM,
		inferencev1alpha1.RuntimeTGI, inferencev1alpha1.RuntimeSGLang, inferencev1alpha1.RuntimePersonaPlex}
	churnPorts = []*int32{nil, nil, ptr.To[int32](8080), ptr.To[int32](9000)}
)

// churnISVC is what the test has asked of one InferenceService, and what other tools put on its
// Deployment.
type churnISVC struct {
	name          string
	labels        map[string]string
	annotations   map[string]string
	protectAlways bool
	runtime       inferencev1alpha1.Runtime
	containerPort *int32
	endpointPort  *int32
	replicas      int32
	// Other tools' keys on the pod template: a GitOps tool by Update, an injector by apply.
	updateLabels map[string]string
	applyAnn     map[string]string
	// removedTool are tool keys a tool took away again; they must stay away.
	removedTool map[string]bool
}

type churnRouter struct {
	name        string
	labels      map[string]string
	annotations map[string]string
}

func (m *churnISVC) spec(s *inferencev1alpha1.InferenceServiceSpec) {
	s.PodLabels = nil
	if len(m.labels) > 0 {
		s.PodLabels = map[string]inferencev1alpha1.LabelValue{}
		for k, v := range m.labels {
			s.PodLabels[k] = inferencev1alpha1.LabelValue(v)
		}
	}
	s.PodAnnotations = maps.Clone(m.annotations)
	if len(s.PodAnnotations) == 0 {
		s.PodAnnotations = nil
	}
	s.Disruption = &inferencev1alpha1.DisruptionSpec{ProtectAlways: ptr.To(m.protectAlways)}
	s.Runtime = m.runtime
	s.ContainerPort = m.containerPort
	s.Endpoint = nil
	if m.endpointPort != nil {
		s.Endpoint = &inferencev1alpha1.EndpointSpec{Port: m.endpointPort}
	}
	s.Replicas = ptr.To(m.replicas)
}

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.Intn(len(from))] }

// churnMapStep adds, changes or removes one key of m.
func churnMapStep(rng *rand.Rand, m map[string]string, keys []string) {
	k := pick(rng, keys)
	if _, ok := m[k]; ok && rng.Intn(2) == 0 {
		delete(m, k)
		return
	}
	m[k] = pick(rng, churnValues)
}

// templateSansTools is the live pod template without the keys other tools own.
func templateSansTools(d *appsv1.Deployment, m *churnISVC) string {
	t := d.Spec.Template.DeepCopy()
	for k := range t.Labels {
		if strings.HasPrefix(k, "gitops.example.com/") {
			delete(t.Labels, k)
		}
	}
	for k := range t.Annotations {
		if strings.HasPrefix(k, "sidecar.example.com/") {
			delete(t.Annotations, k)
		}
	}
	data, err := json.Marshal(t)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

func desiredTemplateJSON(v any) string {
	data, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

var _ = Describe("Invariants under random churn", func() {
	It("keeps every ownership promise across random spec changes, other tools' writes and operator restarts [F10, O1, O2, O9]", func() {
		seed := envInt("LLMKUBE_CHURN_SEED", churnDefaultSeed)
		steps := int(envInt("LLMKUBE_CHURN_STEPS", churnDefaultSteps))
		replay := fmt.Sprintf("churn seed %d (replay: LLMKUBE_CHURN_SEED=%d make test)", seed, seed)
		AddReportEntry("churn seed", seed)
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				fmt.Fprintf(GinkgoWriter, "\n*** %s ***\n", replay)
				fmt.Fprintf(os.Stderr, "\n*** %s ***\n", replay)
			}
		})
		By(replay)
		rng := rand.New(rand.NewSource(seed))
		ns := newNamespace()
		start := func() *operator {
			return startOperatorWith(operatorOptions{namespaces: []string{ns}, noCleanup: true})
		}
		op := start()
		DeferCleanup(func() { op.stop() })

		isvcs := make([]*churnISVC, churnServices)
		for i := range isvcs {
			m := &churnISVC{name: fmt.Sprintf("m%02d", i), labels: map[string]string{}, annotations: map[string]string{},
				runtime: pick(rng, churnRuntimes), replicas: int32(rng.Intn(3)),
				updateLabels: map[string]string{}, applyAnn: map[string]string{}, removedTool: map[string]bool{}}
			churnMapStep(rng, m.labels, churnLabelKeys)
			isvcs[i] = m
			newISVC(ns, m.name, func(isvc *inferencev1alpha1.InferenceService) { m.spec(&isvc.Spec) })
		}
		routers := make([]*churnRouter, churnRouters)
		for i := range routers {
			r := &churnRouter{name: fmt.Sprintf("r%d", i), labels: map[string]string{}, annotations: map[string]string{}}
			routers[i] = r
			newRouter(ns, r.name, func(mr *inferencev1alpha1.ModelRouter) {
				mr.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", isvcs[i].name), externalBackend("cloud", "")}
			})
		}
		settle(isvcController, 0, 0)
		Eventually(func(g Gomega) {
			for _, m := range isvcs {
				g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: m.name}, &appsv1.Deployment{})).To(Succeed())
			}
			for _, r := range routers {
				g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: r.name + "-router-proxy"}, &appsv1.Deployment{})).To(Succeed())
			}
		}).WithTimeout(60 * time.Second).Should(Succeed())

		// Per object, the desired and live templates at the last check.
		lastDesired, lastLive := map[string]string{}, map[string]string{}
		restarts, toolWrites, rounds := 0, 0, 0
		editRouterSpec := func(r *churnRouter) {
			editRouter(ns, r.name, func(mr *inferencev1alpha1.ModelRouter) {
				mr.Spec.Proxy = &inferencev1alpha1.ProxySpec{}
				if len(r.labels) > 0 {
					mr.Spec.Proxy.PodLabels = map[string]inferencev1alpha1.LabelValue{}
					for k, v := range r.labels {
						mr.Spec.Proxy.PodLabels[k] = inferencev1alpha1.LabelValue(v)
					}
				}
				if len(r.annotations) > 0 {
					mr.Spec.Proxy.PodAnnotations = maps.Clone(r.annotations)
				}
			})
		}

		check := func() {
			rounds++
			where := fmt.Sprintf("%s, after round %d", replay, rounds)
			settle(isvcController, reconciles(isvcController), 0)
			settle(routerController, reconciles(routerController), 0)
			Eventually(func(g Gomega) {
				for _, m := range isvcs {
					checkChurnISVC(g, ns, m, where)
				}
				for _, r := range routers {
					checkChurnRouter(g, ns, r, where)
				}
			}).WithTimeout(20*time.Second).Should(Succeed(), where)

			By("the pod template changed only where the desired template changed")
			for _, m := range isvcs {
				isvc := &inferencev1alpha1.InferenceService{}
				Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: m.name}, isvc)).To(Succeed())
				desired, err := inferenceservice.Deployment(isvc, inferenceservice.Inputs{Replicas: ptr.To(m.replicas)})
				Expect(err).NotTo(HaveOccurred())
				dj := desiredTemplateJSON(desired.Spec.Template)
				lj := templateSansTools(deployment(ns, m.name), m)
				if prev, ok := lastDesired[m.name]; ok && prev == dj {
					Expect(lj).To(Equal(lastLive[m.name]), "%s: %s's template changed though its desired template did not", where, m.name)
				}
				lastDesired[m.name], lastLive[m.name] = dj, lj
			}
			for _, r := range routers {
				mr := getRouter(ns, r.name)
				found := modelrouter.Lookup{InferenceServices: map[string]*inferencev1alpha1.InferenceService{}, Secrets: map[string]bool{}}
				for _, b := range mr.Spec.Backends {
					if b.InferenceServiceRef != nil {
						isvc := &inferencev1alpha1.InferenceService{}
						if k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: b.InferenceServiceRef.Name}, isvc) == nil {
							found.InferenceServices[isvc.Name] = isvc
						}
					}
				}
				res := modelrouter.Resolve(mr, found)
				desired := modelrouter.Deployment(mr, modelrouter.Inputs{Resolutions: res})
				dj := desiredTemplateJSON(desired.Spec.Template)
				lj := templateSansTools(deployment(ns, r.name+"-router-proxy"), nil)
				key := "router/" + r.name
				if prev, ok := lastDesired[key]; ok && prev == dj {
					Expect(lj).To(Equal(lastLive[key]), "%s: router %s's template changed though its desired template did not", where, r.name)
				}
				lastDesired[key], lastLive[key] = dj, lj
			}

			By("no write in a quiet reconcile")
			mark := op.mark()
			touched := map[string]bool{}
			for len(touched) < 10 {
				touched[pick(rng, isvcs).name] = true
			}
			beforeI, beforeR := reconciles(isvcController), reconciles(routerController)
			for name := range touched {
				touch(ns, name)
			}
			touchRouter(ns, pick(rng, routers).name)
			settle(isvcController, beforeI, len(touched))
			settle(routerController, beforeR, 1)
			Expect(op.writes(mark)).To(BeEmpty(), "%s: a quiet reconcile wrote", where)
		}

		check()
		for step := 0; step < steps; step++ {
			switch n := rng.Intn(100); {
			case n < 2:
				By(fmt.Sprintf("step %d: restart the operator while reconciles are in flight", step))
				op.stop()
				before := reconciles(isvcController)
				op = start()
				restarts++
				settle(isvcController, before, churnServices)
			case n < 45:
				m := pick(rng, isvcs)
				switch k := rng.Intn(10); {
				case k < 4:
					churnMapStep(rng, m.labels, churnLabelKeys)
				case k < 7:
					churnMapStep(rng, m.annotations, churnAnnKeys)
				case k == 7:
					m.protectAlways = !m.protectAlways
				case k == 8:
					m.runtime = pick(rng, churnRuntimes)
					m.containerPort, m.endpointPort = pick(rng, churnPorts), pick(rng, churnPorts)
				default:
					m.replicas = int32(rng.Intn(4))
				}
				editISVC(ns, m.name, func(isvc *inferencev1alpha1.InferenceService) { m.spec(&isvc.Spec) })
			case n < 60:
				r := pick(rng, routers)
				if rng.Intn(2) == 0 {
					churnMapStep(rng, r.labels, churnLabelKeys[:4])
				} else {
					churnMapStep(rng, r.annotations, churnAnnKeys[:3])
				}
				editRouterSpec(r)
			case n < 80:
				m := pick(rng, isvcs)
				toolWrites++
				k := "gitops.example.com/" + pick(rng, []string{"tracked", "app", "rev"})
				if _, ok := m.updateLabels[k]; ok && rng.Intn(2) == 0 {
					delete(m.updateLabels, k)
					m.removedTool[k] = true
				} else {
					m.updateLabels[k] = pick(rng, churnValues)
					delete(m.removedTool, k)
				}
				Eventually(func() error {
					d := deployment(ns, m.name)
					for _, gk := range []string{"gitops.example.com/tracked", "gitops.example.com/app", "gitops.example.com/rev"} {
						delete(d.Spec.Template.Labels, gk)
					}
					maps.Copy(d.Spec.Template.Labels, m.updateLabels)
					return k8sClient.Update(suiteCtx, d, client.FieldOwner("argocd-controller"))
				}).Should(Succeed())
			default:
				m := pick(rng, isvcs)
				toolWrites++
				k := "sidecar.example.com/" + pick(rng, []string{"injected", "version"})
				if _, ok := m.applyAnn[k]; ok && rng.Intn(2) == 0 {
					delete(m.applyAnn, k)
					m.removedTool[k] = true
				} else {
					m.applyAnn[k] = pick(rng, churnValues)
					delete(m.removedTool, k)
				}
				ac := appsv1ac.Deployment(m.name, ns)
				if len(m.applyAnn) > 0 {
					ac.WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().WithAnnotations(maps.Clone(m.applyAnn))))
				}
				Expect(k8sClient.Apply(suiteCtx, ac, client.FieldOwner("sidecar-injector"))).To(Succeed())
			}
			if (step+1)%churnRoundSteps == 0 || step == steps-1 {
				check()
			}
		}
		AddReportEntry("churn", fmt.Sprintf("seed %d: %d steps in %d checked rounds, %d operator restarts, %d other-tool writes, %d InferenceServices, %d ModelRouters",
			seed, steps, rounds, restarts, toolWrites, churnServices, churnRouters))
		fmt.Fprintf(GinkgoWriter, "churn: seed %d, %d steps, %d rounds, %d restarts, %d tool writes\n", seed, steps, rounds, restarts, toolWrites)
		Expect(restarts).To(BeNumerically(">", 0), "the seed must restart the operator at least once")
	})
})

func checkChurnISVC(g Gomega, ns string, m *churnISVC, where string) {
	d := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: m.name}, d)).To(Succeed())
	what := func(s string) string { return fmt.Sprintf("%s: %s %s", where, m.name, s) }
	g.Expect(d.Spec.Selector.MatchLabels).To(Equal(inferenceservice.SelectorLabels(m.name)), what("selector"))
	g.Expect(d.Spec.Selector.MatchExpressions).To(BeEmpty(), what("selector"))
	labels, ann := d.Spec.Template.Labels, d.Spec.Template.Annotations

	// Operator precedence: its labels win over podLabels; podAnnotations win over its hints.
	for k, v := range inferenceservice.SelectorLabels(m.name) {
		g.Expect(labels).To(HaveKeyWithValue(k, v), what("selector label"))
	}
	g.Expect(labels).To(HaveKeyWithValue(inferenceservice.LabelRuntime, string(m.runtime)), what("operator label wins"))
	wantDND := "true" // not Ready (envtest runs no pods): startup protection holds
	if v, ok := m.annotations[inferenceservice.AnnotationDoNotDisrupt]; ok {
		wantDND = v
	}
	g.Expect(ann).To(HaveKeyWithValue(inferenceservice.AnnotationDoNotDisrupt, wantDND), what("user annotation wins"))

	for _, k := range churnLabelKeys {
		if k == inferenceservice.LabelRuntime {
			continue
		}
		if v, ok := m.labels[k]; ok {
			g.Expect(labels).To(HaveKeyWithValue(k, v), what("desired label"))
		} else {
			g.Expect(labels).NotTo(HaveKey(k), what("removed label"))
		}
	}
	for _, k := range churnAnnKeys {
		if k == inferenceservice.AnnotationDoNotDisrupt {
			continue
		}
		if v, ok := m.annotations[k]; ok {
			g.Expect(ann).To(HaveKeyWithValue(k, v), what("desired annotation"))
		} else {
			g.Expect(ann).NotTo(HaveKey(k), what("removed annotation"))
		}
	}
	for k, v := range m.updateLabels {
		g.Expect(labels).To(HaveKeyWithValue(k, v), what("another tool's label (Update)"))
	}
	for k, v := range m.applyAnn {
		g.Expect(ann).To(HaveKeyWithValue(k, v), what("another tool's annotation (apply)"))
	}
	for k := range m.removedTool {
		g.Expect(labels).NotTo(HaveKey(k), what("a key its tool removed"))
		g.Expect(ann).NotTo(HaveKey(k), what("a key its tool removed"))
	}

	spec := &inferencev1alpha1.InferenceServiceSpec{Runtime: m.runtime}
	m.spec(spec)
	g.Expect(d.Spec.Replicas).To(HaveValue(Equal(m.replicas)), what("replicas"))
	c := d.Spec.Template.Spec.Containers
	g.Expect(c).To(HaveLen(1), what("one container"))
	g.Expect(c[0].Ports).To(HaveLen(1), what("one port"))
	g.Expect(c[0].Ports[0].ContainerPort).To(Equal(runtimes.ResolvedPort(spec)), what("container port"))
	g.Expect(c[0].Image).To(Equal(runtimes.For(m.runtime).Image), what("image"))
	g.Expect(c[0].Command).To(Equal(runtimes.For(m.runtime).Command), what("command"))
	g.Expect(managersOfKind(d, ownership.DefaultFieldManager)).To(Equal([]string{"Apply/"}), what("one operator entry, an apply"))

	svc := &corev1.Service{}
	g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: m.name}, svc)).To(Succeed())
	g.Expect(svc.Spec.Selector).To(Equal(inferenceservice.SelectorLabels(m.name)), what("service selector"))
	g.Expect(svc.Spec.Ports).To(HaveLen(1), what("service port"))
	g.Expect(svc.Spec.Ports[0].Port).To(Equal(runtimes.ServicePort(spec)), what("service port"))
	g.Expect(svc.Spec.Ports[0].TargetPort.IntVal).To(Equal(runtimes.ResolvedPort(spec)), what("target port"))
}

func checkChurnRouter(g Gomega, ns string, r *churnRouter, where string) {
	d := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: r.name + "-router-proxy"}, d)).To(Succeed())
	what := func(s string) string { return fmt.Sprintf("%s: router %s %s", where, r.name, s) }
	g.Expect(d.Spec.Selector.MatchLabels).To(Equal(routerSelector(r.name)), what("selector"))
	for k, v := range routerSelector(r.name) {
		g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(k, v), what("selector label"))
	}
	for _, k := range churnLabelKeys[:4] {
		if v, ok := r.labels[k]; ok {
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(k, v), what("desired label"))
		} else {
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey(k), what("removed label"))
		}
	}
	for _, k := range churnAnnKeys[:3] {
		if v, ok := r.annotations[k]; ok {
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(k, v), what("desired annotation"))
		} else {
			g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey(k), what("removed annotation"))
		}
	}
	g.Expect(managersOfKind(d, ownership.DefaultFieldManager)).To(Equal([]string{"Apply/"}), what("one operator entry, an apply"))
}

// managersOfKind lists "Operation/subresource" of every managedFields entry of manager.
func managersOfKind(obj client.Object, manager string) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager {
			out = append(out, string(e.Operation)+"/"+e.Subresource)
		}
	}
	slices.Sort(out)
	return out
}
