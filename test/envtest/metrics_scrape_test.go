/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/openai/openai-go/v3"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/rollout"
	"github.com/llmkube/operator/test/helmtool"
	"github.com/llmkube/operator/test/metricsdoc"
)

// scrape reads a /metrics endpoint into metric families.
func scrape(addr string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// missingDocumented lists the documented metrics absent from families, or present without a
// series that has exactly the documented labels and constant, the labels the binary adds to all
// its series (a histogram's le aside).
func missingDocumented(doc map[string]metricsdoc.Metric, families map[string]*dto.MetricFamily, ours func(string) bool, constant ...string) []string {
	var missing []string
	for name, m := range doc {
		if !ours(name) {
			continue
		}
		f, ok := families[name]
		if !ok {
			missing = append(missing, name+": not served")
			continue
		}
		if got := strings.ToLower(f.GetType().String()); got != m.Type {
			missing = append(missing, fmt.Sprintf("%s: type %s, documented %s", name, got, m.Type))
		}
		want := append(slices.Clone(m.Labels), constant...)
		sort.Strings(want)
		var seen []string
		found := false
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName())
			}
			sort.Strings(labels)
			if slices.Equal(labels, want) {
				found = true
				break
			}
			seen = append(seen, strings.Join(labels, ","))
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s: no series with labels %v (served: %v)", name, want, seen))
		}
	}
	sort.Strings(missing)
	return missing
}

// seriesWithout lists the families of which a series lacks the label name=value.
func seriesWithout(families map[string]*dto.MetricFamily, name, value string) []string {
	var out []string
	for fam, f := range families {
		for _, s := range f.GetMetric() {
			if !slices.ContainsFunc(s.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == name && l.GetValue() == value }) {
				out = append(out, fam)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

// The metrics table of docs/operations.md is what an operator team builds dashboards on: each row must be
// served, with its labels, by the binary that owns it.
var _ = Describe("Documented metrics, scraped from the real operator and router-proxy binaries", func() {
	It("serves every metric of docs/operations.md's table with the labels it documents [F8]", func() {
		doc, err := metricsdoc.ReadRepo(helmtool.RepoRoot())
		Expect(err).NotTo(HaveOccurred())
		Expect(doc).To(HaveKey("llmkube_inferenceservices"))
		isProxy := func(n string) bool { return strings.HasPrefix(n, "llmkube_router_") }

		By("the operator binary, as the chart runs it, watching one namespace")
		ns := newNamespace()
		binary, err := gexec.Build("github.com/llmkube/operator/cmd/operator")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(gexec.CleanupBuildArtifacts)
		metricsAddr := freeAddr()
		cmd := exec.Command(binary, "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address=0", "--watch-namespaces="+ns)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+adminKubeconfig())
		op, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { op.Terminate().Wait(10 * time.Second) })

		spare := newFakeOpenAI("spare", upstreamOK)
		newISVC(ns, "llama", nil)
		newISVC(ns, "idle", nil)
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", "llama"), isvcBackend("idle", "idle"),
				externalAt("spare", "openai-compatible", spare.URL+"/v1", "")}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("all", "local", []string{"*"}, "spare")}
			// PrefixAffinity, so the proxy serves its prefix hit counters as well.
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{Balancing: ptr.To(inferencev1alpha1.BalancingPrefixAffinity)}
		})
		routerReady(ns, "r", "local", "idle", "spare")

		By("another manager changes the Deployment's image: the operator takes it back")
		edit(ns, "llama", &appsv1.Deployment{}, func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "example.com/someone-elses:image"
		}, client.FieldOwner("person"))

		By("a rollout waits at the gate (the condition written as the gate writes it; the binary has no pod network to probe)")
		Eventually(func() error {
			isvc := &inferencev1alpha1.InferenceService{}
			if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "llama"}, isvc); err != nil {
				return err
			}
			meta.SetStatusCondition(&isvc.Status.Conditions, metav1.Condition{Type: inferencev1alpha1.ConditionRolloutDeferred,
				Status: metav1.ConditionTrue, Reason: rollout.ReasonWaitingForIdle, Message: "1 of 1 pods busy"})
			return k8sClient.Status().Update(suiteCtx, isvc, client.FieldOwner("test-gate"))
		}).Should(Succeed())

		Eventually(func(g Gomega) {
			families, err := scrape(metricsAddr)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(missingDocumented(doc, families, func(n string) bool { return !isProxy(n) })).To(BeEmpty())
		}).WithTimeout(30 * time.Second).Should(Succeed())

		By("the router-proxy binary, as the operator's Deployment runs it, with traffic, a failing pod and a fallback")
		sa := deployment(ns, "r-router-proxy").Spec.Template.Spec.ServiceAccountName
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		pods := []*fakePod{newFakePod("a", "192.0.2.31"), newFakePod("b", "192.0.2.32")}
		for _, f := range pods {
			podSlice(ns, "llama", f, true)
		}
		pods[0].mode.Store(podFail)
		p := startBalancingProxy(ns, kubeconfig, "--failure-threshold=2", "--cooldown=10m")
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(2.0))
		for i := range 10 {
			_, err := chatAs(p, int64(i), hello("hi"))
			Expect(err).NotTo(HaveOccurred())
		}
		oc := openaiClient(p, "")
		stream := oc.Chat.Completions.NewStreaming(suiteCtx, openai.ChatCompletionNewParams{
			Model: "llama-3", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}) // token latencies
		for stream.Next() {
		}
		Expect(stream.Err()).NotTo(HaveOccurred())
		pods[1].mode.Store(podFail)
		who, err := chatAs(p, 100, hello("hi"))
		Expect(err).NotTo(HaveOccurred())
		Expect(who).To(Equal("hello from spare"))
		stream = oc.Chat.Completions.NewStreaming(suiteCtx, openai.ChatCompletionNewParams{
			Model: "llama-3", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(false)}}) // no usage: an estimate
		for stream.Next() {
		}
		Expect(stream.Err()).NotTo(HaveOccurred())

		Eventually(func(g Gomega) {
			families, err := scrape(p.metrics)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(missingDocumented(doc, families, isProxy, "router")).To(BeEmpty())
			// Every series, the Go runtime's too, names its router by itself (--router-name):
			// annotation scraping relabels nothing into router.
			g.Expect(seriesWithout(families, "router", "r")).To(BeEmpty())
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})
})
