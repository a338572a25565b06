/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

// enginePod is a fakePod whose /metrics says what a vLLM server would: requests waiting and
// running, and KV-cache use, in Prometheus text format under vLLM's names. Its endpoint can hang:
// it then sends its headers and half a page, and nothing more.
type enginePod struct {
	*fakePod
	waiting, running atomic.Int64
	hang             atomic.Bool
	hangingReads     atomic.Int64 // reads being held right now
	stop             chan struct{}
}

func newEnginePod(name, ip string) *enginePod {
	e := &enginePod{fakePod: newFakePod(name, ip), stop: make(chan struct{})}
	h := http.HandlerFunc(e.serveMetrics)
	e.metrics.Store(&h)
	DeferCleanup(func() { close(e.stop) })
	return e
}

func (e *enginePod) report(waiting, running int64) {
	e.waiting.Store(waiting)
	e.running.Store(running)
}

func (e *enginePod) serveMetrics(w http.ResponseWriter, r *http.Request) {
	page := fmt.Sprintf(`# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="llama-3"} %d
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="llama-3"} %d
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="llama-3"} 0.25
`, e.running.Load(), e.waiting.Load())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	if !e.hang.Load() {
		_, _ = w.Write([]byte(page))
		return
	}
	_, _ = w.Write([]byte(page[:len(page)/2]))
	_ = http.NewResponseController(w).Flush()
	e.hangingReads.Add(1)
	defer e.hangingReads.Add(-1)
	select {
	case <-e.stop:
	case <-r.Context().Done():
	}
}

var _ = Describe("Router proxy balancing on what the engines report", func() {
	It("writes the engine section and the runtime's metric names into the routing document, and refuses weights without EngineAware [E5]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		newISVC(ns, "llama", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = inferencev1alpha1.RuntimeVLLM })
		newISVC(ns, "tgi", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = inferencev1alpha1.RuntimeTGI })
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", "llama"), isvcBackend("tgi", "tgi")}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("all", "local", []string{"*"}, "tgi")}
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{
				Balancing:     ptr.To(inferencev1alpha1.BalancingEngineAware),
				EngineScoring: &inferencev1alpha1.EngineScoring{PrefixWeight: ptr.To[int32](5)},
			}
		})
		eventuallyConfigMap(ns, "r-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			doc := cm.Data["config.json"]
			g.Expect(doc).To(ContainSubstring(`"balancing":"EngineAware"`))
			g.Expect(doc).To(ContainSubstring(`"weights":{"queue":3,"kvCache":1,"inFlight":1,"prefix":5}`))
			g.Expect(doc).To(ContainSubstring(`"metrics":{"path":"/metrics","waiting":"vllm:num_requests_waiting","running":"vllm:num_requests_running","kvCache":"vllm:kv_cache_usage_perc"}`))
			g.Expect(doc).To(ContainSubstring(`"metrics":{"path":"/metrics","waiting":"tgi_queue_size","running":"tgi_batch_current_size"}`))
		})

		By("engineScoring without balancing EngineAware, or with every weight 0, is refused, naming the field")
		withProxy := func(name string, proxy *inferencev1alpha1.ProxySpec) error {
			return k8sClient.Create(suiteCtx, &inferencev1alpha1.ModelRouter{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: inferencev1alpha1.ModelRouterSpec{
					Backends: []inferencev1alpha1.Backend{isvcBackend("local", "llama")},
					Rules:    []inferencev1alpha1.RoutingRule{rule("all", "local", []string{"*"})},
					Proxy:    proxy,
				},
			})
		}
		Expect(withProxy("bad", &inferencev1alpha1.ProxySpec{EngineScoring: &inferencev1alpha1.EngineScoring{QueueWeight: ptr.To[int32](1)}})).
			To(MatchError(ContainSubstring("spec.proxy.engineScoring is read only with spec.proxy.balancing: EngineAware")))
		zero := ptr.To[int32](0)
		Expect(withProxy("zero", &inferencev1alpha1.ProxySpec{Balancing: ptr.To(inferencev1alpha1.BalancingEngineAware),
			EngineScoring: &inferencev1alpha1.EngineScoring{QueueWeight: zero, KVCacheWeight: zero, InFlightWeight: zero, PrefixWeight: zero}})).
			To(MatchError(ContainSubstring("spec.proxy.engineScoring: at least one of queueWeight")))
	})

	It("avoids a pod whose engine reports a long queue, returns to it once it drains, and a pod whose metrics hang slows no request and is counted blind [E1] [E2]", func() {
		ns := newNamespace()
		sa := balancedRouter(ns, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{Balancing: ptr.To(inferencev1alpha1.BalancingEngineAware)}
		}, func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = inferencev1alpha1.RuntimeVLLM })
		eventuallyConfigMap(ns, "r-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(`"waiting":"vllm:num_requests_waiting"`))
		})
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		pods := []*enginePod{newEnginePod("a", "192.0.2.41"), newEnginePod("b", "192.0.2.42"), newEnginePod("c", "192.0.2.43")}
		a, c := pods[0], pods[2]
		for _, e := range pods {
			podSlice(ns, "llama", e.fakePod, true)
		}
		a.report(40, 8) // saturated: its batch full and 40 waiting, all sent by others
		pods[1].report(0, 1)
		c.report(0, 2)
		p := startBalancingProxy(ns, kubeconfig)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(3.0))
		blind := func() float64 { return p.metric(`llmkube_router_engine_pods_blind{backend="local"}`) }
		Eventually(blind).Should(Equal(0.0))

		// A round counts only when no read failed during it: on a loaded machine a pod's reads can
		// miss their 80 ms deadline three times in a row, and the pod is then scored blind (E2,
		// proved below), not by what its engine reports (E1).
		failed := func() float64 { return p.metric(`llmkube_router_engine_reads_failed_total{backend="local"}`) }
		roundWithoutFailedReads := func(first, n int) map[string]int {
			var seen map[string]int
			Eventually(func() float64 {
				before := failed()
				seen = map[string]int{}
				for i := range n {
					who, err := chatAs(p, int64(first+i), hello("hi"))
					Expect(err).NotTo(HaveOccurred())
					seen[who]++
				}
				return failed() - before
			}).WithTimeout(time.Minute).Should(BeZero(), "every round had a failed read")
			return seen
		}

		By("while its queue is long, the saturated pod gets no request, though this proxy sent it none")
		seen := roundWithoutFailedReads(0, 30)
		Expect(seen["a"]).To(BeZero(), "requests per pod: %v", seen)

		By("once it drains, and the others fill, it gets the requests again")
		a.report(0, 0)
		pods[1].report(6, 8)
		c.report(6, 8)
		Eventually(func() string { who, _ := chatAs(p, 100, hello("hi")); return who }).Should(Equal("a"))
		seen = roundWithoutFailedReads(200, 20)
		Expect(seen["a"]).To(Equal(20), "requests per pod: %v", seen)

		By("a pod whose metrics endpoint hangs mid-page is counted blind; every request is answered while its reads hang")
		a.report(0, 1)
		pods[1].report(0, 1)
		c.report(0, 1)
		c.hang.Store(true)
		Eventually(blind).Should(Equal(1.0))
		Eventually(c.hangingReads.Load).Should(BeNumerically(">=", 1))
		client := openaiClient(p, "")
		for i := range 30 {
			// A request that waited for the hanging read would wait for ever: the read is held
			// until the test ends. Two seconds is a deadline, not a measure of speed.
			ctx, cancel := context.WithTimeout(suiteCtx, 2*time.Second)
			resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "llama-3", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
			cancel()
			Expect(err).NotTo(HaveOccurred(), "request %d", i)
			Expect(strings.TrimSpace(resp.Choices[0].Message.Content)).To(BeElementOf("a", "b", "c"))
		}
		// The scraper gives a hanging read up at its deadline and starts the next, so between two
		// reads none may be open for a moment (seen on a loaded machine): the pod keeps hanging.
		Eventually(c.hangingReads.Load).Should(BeNumerically(">=", 1), "the pod's reads still hang")
		Expect(p.metric(`llmkube_router_engine_reads_failed_total{backend="local"}`)).To(BeNumerically(">=", 1))
	})
})
