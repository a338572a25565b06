/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

// provider is an external API on 127.0.0.1 that records what reached it and answers as a
// provider does: identity and rate-limit headers, a cookie, and its own GET /v1/models.
type provider struct {
	*httptest.Server
	name   string
	models []string
	status atomic.Int32 // of chat completions; 200 when 0
	conns  atomic.Int32 // connections opened to it
	mu     sync.Mutex
	got    []*recorded
}

func newProvider(name string, models ...string) *provider {
	p := &provider{name: name, models: models}
	p.Server = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			p.conns.Add(1)
		}
	}
	p.Start()
	DeferCleanup(p.Close)
	return p
}

func (p *provider) last() *recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.got) == 0 {
		return &recorded{header: http.Header{}}
	}
	return p.got[len(p.got)-1]
}

func (p *provider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	p.mu.Lock()
	p.got = append(p.got, &recorded{path: r.URL.Path, header: r.Header.Clone(), model: req.Model, body: string(body)})
	p.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Set-Cookie", "__cf_bm=provider-session; Path=/")
	h.Set("OpenAI-Organization", "org-of-the-operator")
	h.Set("OpenAI-Project", "proj-of-the-operator")
	h.Set("X-Ratelimit-Remaining-Requests", "42")
	h.Set("Retry-After", "7")
	if r.URL.Path == "/v1/models" {
		var data []string
		for _, m := range p.models {
			data = append(data, fmt.Sprintf(`{"id":%q,"object":"model","created":1700000000,"owned_by":"upstream"}`, m))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s]}`, strings.Join(data, ","))
		return
	}
	if s := int(p.status.Load()); s != 0 && s != http.StatusOK {
		w.WriteHeader(s)
		// A real provider's error page is larger than one read: draining it is what keeps the
		// connection.
		fmt.Fprintf(w, `{"error":{"message":"%s is rate limited %s","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, p.name, strings.Repeat(" ", 8<<10))
		return
	}
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hello from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}`, req.Model, p.name)
}

func chatParams(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
}

// rssOf is the resident memory of a process, from /proc.
func rssOf(pid int) uint64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb uint64
			_, _ = fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10
		}
	}
	Fail("no VmRSS")
	return 0
}

var _ = Describe("Router proxy under real LLM traffic", func() {
	It("lets a generation take longer than a timeout of old, never retries a timeout on another pod, and sends it to the rule's fallback [R6]", func() {
		ns := newNamespace()
		spare := newProvider("spare")
		sa := balancedRouter(ns, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, externalAt("spare", "openai-compatible", spare.URL+"/v1", ""))
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{
				{Name: "quick", Models: []string{"quick-*"}, Backend: "local", Fallbacks: []string{"spare"}, Timeout: ptr.To("500ms")},
				rule("all", "local", []string{"*"}),
			}
		})
		routerReady(ns, "r", "local", "spare")
		eventuallyConfigMap(ns, "r-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(`"timeout":"500ms"`))
		})
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		pods := []*fakePod{newFakePod("a", "192.0.2.61"), newFakePod("b", "192.0.2.62"), newFakePod("c", "192.0.2.63")}
		for _, f := range pods {
			f.delay.Store(int64(1500 * time.Millisecond))
			f.gap.Store(int64(700 * time.Millisecond))
			podSlice(ns, "llama", f, true)
		}
		p := startBalancingProxy(ns, kubeconfig, "--failure-threshold=1", "--cooldown=10m", "--stream-idle-timeout=2s")
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(3.0))
		c := openaiClient(p, "")
		got := func() int {
			n := 0
			for _, f := range pods {
				n += f.got()
			}
			return n
		}

		By("a rule with a 500ms timeout: each request tries one pod, then the fallback; no pod is ejected")
		for i := range 3 {
			resp, err := c.Chat.Completions.New(suiteCtx, chatParams(fmt.Sprintf("quick-%d", i)))
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Choices[0].Message.Content).To(Equal("hello from spare"))
		}
		Expect(got()).To(Equal(3), "a timed-out generation ran again on another pod")
		Expect(p.metric(`llmkube_router_pod_ejections_total{backend="local"}`)).To(BeNumerically("<=", 0), "a slow pod was ejected")
		Expect(p.metric(`llmkube_router_upstream_errors_total{backend="local",reason="timeout"}`)).To(Equal(3.0))

		By("the default wait: a 1.5 s answer is served by the pod that computed it")
		before := got()
		resp, err := c.Chat.Completions.New(suiteCtx, chatParams("llama-3"))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Choices[0].Message.Content).To(BeElementOf("a", "b", "c"))
		Expect(got()).To(Equal(before + 1))

		By("a stream whose chunks come 700ms apart for 2.8 s runs to its end under a 2 s idle limit")
		stream := c.Chat.Completions.NewStreaming(suiteCtx, chatParams("llama-3"))
		var text strings.Builder
		for stream.Next() {
			if ch := stream.Current().Choices; len(ch) > 0 {
				text.WriteString(ch[0].Delta.Content)
			}
		}
		Expect(stream.Err()).NotTo(HaveOccurred())
		Expect(text.String()).To(Equal("01234"))

		By("a stream that stops sending for longer than its idle limit is cut")
		for _, f := range pods {
			f.gap.Store(int64(4 * time.Second))
		}
		stream = c.Chat.Completions.NewStreaming(suiteCtx, chatParams("llama-3"))
		for stream.Next() {
		}
		Expect(stream.Err()).To(HaveOccurred())
	})

	It("sends an external provider only allowlisted headers and the Secret's organization and project, and gives the client none of the provider's identity [R4]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		cloud := newProvider("cloud")
		newSecret(ns, "cloud-key", map[string]string{"API_KEY": "sk-operator", "ORGANIZATION": "org-operator", "PROJECT": "proj-operator"})
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{externalAt("cloud", "openai", cloud.URL+"/v1", "cloud-key")}
			r.Spec.DefaultRoute = ptr.To("cloud")
		})
		routerReady(ns, "r", "cloud")
		p := runProxyAsDeployed(ns, "r-router-proxy")
		var httpResp *http.Response
		c := openaiClient(p, "client-key")
		_, err := c.Chat.Completions.New(suiteCtx, chatParams("gpt-4o"), option.WithResponseInto(&httpResp),
			option.WithHeader("Cookie", "session=client"), option.WithHeader("OpenAI-Organization", "org-client-picked"),
			option.WithHeader("OpenAI-Project", "proj-client-picked"), option.WithHeader("X-Goog-Api-Key", "goog-client"),
			option.WithHeader("Ocp-Apim-Subscription-Key", "apim-client"), option.WithHeader("OpenAI-Beta", "assistants=v2"),
			option.WithHeader("X-Internal-Trace", "secret-topology"))
		Expect(err).NotTo(HaveOccurred())

		got := cloud.last().header
		for _, h := range []string{"Cookie", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "X-Internal-Trace"} {
			Expect(got.Get(h)).To(BeEmpty(), "%s reached the provider", h)
		}
		Expect(got.Get("OpenAI-Organization")).To(Equal("org-operator"))
		Expect(got.Get("OpenAI-Project")).To(Equal("proj-operator"))
		Expect(got.Get("Authorization")).To(Equal("Bearer sk-operator"))
		Expect(got.Get("OpenAI-Beta")).To(Equal("assistants=v2"))
		Expect(got.Get("Content-Type")).To(Equal("application/json"))
		Expect(got.Get("User-Agent")).NotTo(BeEmpty())
		Expect(got.Get("X-Request-Id")).To(Equal(httpResp.Header.Get("X-Request-Id")))

		Expect(httpResp.Header.Get("Set-Cookie")).To(BeEmpty())
		Expect(httpResp.Header.Get("OpenAI-Organization")).To(BeEmpty())
		Expect(httpResp.Header.Get("OpenAI-Project")).To(BeEmpty())
		Expect(httpResp.Header.Get("X-Ratelimit-Remaining-Requests")).To(Equal("42"))
		Expect(httpResp.Header.Get("Retry-After")).To(Equal("7"))
	})

	It("accepts a client key as bearer in any case, api-key or x-api-key [R5]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		cloud := newProvider("cloud")
		newSecret(ns, "client-keys", map[string]string{"team": "client-key-1"})
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{externalAt("cloud", "openai-compatible", cloud.URL+"/v1", "")}
			r.Spec.DefaultRoute = ptr.To("cloud")
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{APIKeySecretRef: &inferencev1alpha1.LocalObjectReference{Name: "client-keys"}}
		})
		routerReady(ns, "r", "cloud")
		p := runProxyAsDeployed(ns, "r-router-proxy")
		status := func(header, value string) int {
			req, err := http.NewRequest(http.MethodPost, p.url("/v1/chat/completions"), strings.NewReader(`{"model":"m","messages":[]}`))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set(header, value)
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode
		}
		for _, ok := range [][2]string{
			{"Authorization", "Bearer client-key-1"}, {"Authorization", "bearer client-key-1"}, {"Authorization", "BEARER client-key-1"},
			{"Api-Key", "client-key-1"}, {"X-Api-Key", "client-key-1"},
		} {
			Expect(status(ok[0], ok[1])).To(Equal(200), "%s: %s", ok[0], ok[1])
		}
		for _, bad := range [][2]string{{"Authorization", "bearer wrong"}, {"Api-Key", "wrong"}, {"X-Api-Key", ""}, {"Authorization", "Basic client-key-1"}} {
			Expect(status(bad[0], bad[1])).To(Equal(401), "%s: %s", bad[0], bad[1])
		}
		for _, h := range []string{"Authorization", "Api-Key", "X-Api-Key"} {
			Expect(cloud.last().header.Get(h)).To(BeEmpty(), "the client's %s reached the backend", h)
		}
	})

	It("always tries a cooling backend when its fallbacks did not resolve, so it answers again once it recovered [R7]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		a := newProvider("a")
		a.status.Store(http.StatusServiceUnavailable)
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{
				externalAt("a", "openai-compatible", a.URL+"/v1", ""),
				externalAt("ghost", "openai", "https://api.openai.com/v1", "no-such-secret"),
			}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("r", "a", []string{"*"}, "ghost")}
		})
		routerReady(ns, "r", "a")
		p := runProxyAsDeployed(ns, "r-router-proxy", "--failure-threshold=1", "--cooldown=10m")
		c := openaiClient(p, "")
		_, err := c.Chat.Completions.New(suiteCtx, chatParams("m"))
		Expect(apiError(err).StatusCode).To(Equal(503))
		By("a is cooling down now, and recovers")
		a.status.Store(http.StatusOK)
		resp, err := c.Chat.Completions.New(suiteCtx, chatParams("m"))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Choices[0].Message.Content).To(Equal("hello from a"))
	})

	It("drains a failed answer before falling back, so the connection to the failing provider is reused [R7]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		limited, spare := newProvider("limited"), newProvider("spare")
		limited.status.Store(http.StatusTooManyRequests)
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{
				externalAt("limited", "openai-compatible", limited.URL+"/v1", ""),
				externalAt("spare", "openai-compatible", spare.URL+"/v1", ""),
			}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("r", "limited", []string{"*"}, "spare")}
		})
		routerReady(ns, "r", "limited", "spare")
		p := runProxyAsDeployed(ns, "r-router-proxy", "--failure-threshold=1000")
		c := openaiClient(p, "")
		for range 50 {
			resp, err := c.Chat.Completions.New(suiteCtx, chatParams("m"))
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Choices[0].Message.Content).To(Equal("hello from spare"))
		}
		Expect(limited.count()).To(Equal(50))
		Expect(limited.conns.Load()).To(BeNumerically("<=", 2), "connections opened to the rate-limited provider for 50 fallbacks")
	})

	It("counts a dual-stack pod once, and keeps a pod's in-flight count across a readiness flap [R16]", func() {
		ns := newNamespace()
		sa := balancedRouter(ns, nil)
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		a, b := newFakePod("a", "192.0.2.71"), newFakePod("b", "192.0.2.72")
		for i, f := range []*fakePod{a, b} {
			for _, fam := range []struct {
				t    discoveryv1.AddressType
				addr string
			}{{discoveryv1.AddressTypeIPv4, f.ip}, {discoveryv1.AddressTypeIPv6, fmt.Sprintf("2001:db8::%d", 71+i)}} {
				Expect(k8sClient.Create(suiteCtx, &discoveryv1.EndpointSlice{
					ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("llama-%s-%s", f.name, strings.ToLower(string(fam.t))), Labels: map[string]string{discoveryv1.LabelServiceName: "llama"}},
					AddressType: fam.t,
					Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fam.addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
						TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "llama-" + f.name}}},
					Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(f.port), Protocol: ptr.To(corev1.ProtocolTCP)}},
				})).To(Succeed())
			}
		}
		p := startBalancingProxy(ns, kubeconfig, "--test-address-map=192.0.2.0/24=127.0.0.1,2001:db8::/32=127.0.0.1")
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(2.0), "two dual-stack pods")

		setReady := func(f *fakePod, ready bool) {
			for _, fam := range []string{"ipv4", "ipv6"} {
				edit(ns, "llama-"+f.name+"-"+fam, &discoveryv1.EndpointSlice{}, func(s *discoveryv1.EndpointSlice) {
					s.Endpoints[0].Conditions.Ready = ptr.To(ready)
				})
			}
		}
		By("pod a alone holds 10 requests (open streams of a long generation)")
		setReady(b, false)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(1.0))
		a.mode.Store(podHold)
		var held sync.WaitGroup
		DeferCleanup(func() { a.unhold(); held.Wait() })
		for range 10 {
			held.Add(1)
			go func() {
				defer held.Done()
				_, _ = chatAs(p, 1, hello("held"))
			}()
		}
		Eventually(a.held.Load).Should(Equal(int32(10)))

		By("pod a's readiness flaps while b comes back")
		setReady(a, false)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(0.0))
		setReady(a, true)
		setReady(b, true)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(2.0))

		By("new requests go to the idle pod b: pod a still counts its 10")
		before := a.got()
		c := openaiClient(p, "")
		for i := range 10 {
			ctx, cancel := context.WithTimeout(suiteCtx, 3*time.Second)
			resp, err := c.Chat.Completions.New(ctx, chatParams("llama-3"))
			cancel()
			Expect(err).NotTo(HaveOccurred(), "request %d", i)
			Expect(resp.Choices[0].Message.Content).To(Equal("b"))
		}
		Expect(a.got()).To(Equal(before))
	})

	It("lists the rules' model names and the backends' own models, and serves one model by id [R10]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		cloud := newProvider("cloud", "gpt-4o", "gpt-4o-mini", "text-embedding-3-small")
		local := newProvider("local", "qwen2.5-7b", "gpt-4o")
		down := newProvider("down")
		down.Close() // answers nothing: left out, not an error
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{
				externalAt("cloud", "openai-compatible", cloud.URL+"/v1", ""),
				externalAt("local", "openai-compatible", local.URL+"/v1", ""),
				externalAt("down", "openai-compatible", down.URL+"/v1", ""),
			}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{
				rule("gpt", "cloud", []string{"gpt-*"}),
				rule("named", "down", []string{"house-model"}),
			}
			r.Spec.DefaultRoute = ptr.To("local")
		})
		routerReady(ns, "r", "cloud", "local", "down")
		p := runProxyAsDeployed(ns, "r-router-proxy")
		c := openaiClient(p, "")
		page, err := c.Models.List(suiteCtx)
		Expect(err).NotTo(HaveOccurred())
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		// gpt-4o of local routes to cloud (the gpt-* rule), text-embedding-3-small of cloud to local
		// (the default route): neither is listed for the backend that would not get it.
		Expect(ids).To(ConsistOf("house-model", "gpt-4o", "gpt-4o-mini", "qwen2.5-7b"))
		m, err := c.Models.Get(suiteCtx, "qwen2.5-7b")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.OwnedBy).To(Equal("local"))
		_, err = c.Models.Get(suiteCtx, "no-such-model")
		Expect(apiError(err).StatusCode).To(Equal(404))
	})

	It("holds a 4 MiB prompt once, passes it byte for byte, and allocates nothing for a declared length that does not arrive [R8]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		cloud := newProvider("cloud")
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			b := externalAt("cloud", "openai-compatible", cloud.URL+"/v1", "")
			b.External.Model = ptr.To("upstream-model")
			r.Spec.Backends = []inferencev1alpha1.Backend{b}
			r.Spec.DefaultRoute = ptr.To("cloud")
		})
		routerReady(ns, "r", "cloud")
		p := runProxyAsDeployed(ns, "r-router-proxy")

		By("a 4 MiB prompt reaches the provider with only the model changed")
		prompt := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4<<20/45)
		body, err := json.Marshal(map[string]any{"model": "big", "messages": []any{map[string]any{"role": "user", "content": prompt}}, "temperature": 0.25})
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.Post(p.url("/v1/chat/completions"), "application/json", bytes.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(200))
		Expect(cloud.last().body).To(Equal(strings.Replace(string(body), `"model":"big"`, `"model":"upstream-model"`, 1)))

		By("8 clients declare 32 MiB bodies and send 1 KiB each")
		idle := rssOf(p.cmd.Process.Pid)
		for range 8 {
			conn, err := net.Dial("tcp", p.addr)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(conn.Close)
			fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":\"big\",\"messages\":[{\"role\":\"user\",\"content\":\"%s", 32<<20, strings.Repeat("x", 1<<10))
		}
		time.Sleep(time.Second)
		grown := int64(rssOf(p.cmd.Process.Pid)) - int64(idle)
		Expect(grown).To(BeNumerically("<", 32<<20), "RSS grew by %d MiB for 8 KiB received", grown>>20)
	})
})

var _ = Describe("Router proxy routing changes", func() {
	It("switches new requests to a changed document while a stream finishes on the old one, and refuses a bad document without stopping [R9]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		a, b := newFakeOpenAI("a", upstreamOK), newFakeOpenAI("b", upstreamOK)
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{
				externalAt("a", "openai-compatible", a.URL+"/v1", ""),
				externalAt("b", "openai-compatible", b.URL+"/v1", ""),
			}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("chat", "a", []string{"chat-*"})}
		})
		routerReady(ns, "r", "a", "b")
		generation := deployment(ns, "r-router-proxy").Generation
		p := runProxyAsDeployed(ns, "r-router-proxy", "--config-reload-interval=200ms")
		c := openaiClient(p, "")

		By("a stream is open on a")
		release := a.holdStreams()
		stream := c.Chat.Completions.NewStreaming(suiteCtx, chatParams("chat-long"))
		Expect(stream.Next()).To(BeTrue(), "chunk 1: %v", stream.Err())

		By("the rule moves to b: the operator writes the ConfigMap, the kubelet swaps the mounted file")
		editRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) { r.Spec.Rules[0].Backend = "b" })
		cm := eventuallyConfigMap(ns, "r-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(`"backend":"b"`))
		})
		p.remount("config", cm.Data)
		Eventually(func(g Gomega) {
			resp, err := c.Chat.Completions.New(suiteCtx, chatParams("chat-new"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(resp.Choices[0].Message.Content).To(Equal("hello from b"))
		}).Should(Succeed())
		Expect(p.metric(`llmkube_router_config_reloads_total{result="applied"}`)).To(Equal(1.0))

		By("the stream that started on a finishes on a")
		close(release)
		var rest strings.Builder
		for stream.Next() {
			if ch := stream.Current().Choices; len(ch) > 0 {
				rest.WriteString(ch[0].Delta.Content)
			}
		}
		Expect(stream.Err()).NotTo(HaveOccurred())
		Expect(rest.String()).To(Equal("lo"))
		Expect(deployment(ns, "r-router-proxy").Generation).To(Equal(generation), "the routing change rolled the proxy pods")

		By("a document the proxy cannot read is refused; the one it serves keeps serving")
		p.remount("config", map[string]string{"config.json": `{"version":"llmkube.dev/routing/v1","backends":[],"weights":{}}`})
		Eventually(func() float64 { return p.metric(`llmkube_router_config_reloads_total{result="refused"}`) }).Should(Equal(1.0))
		Expect(p.metric(`llmkube_router_config_last_reload_successful`)).To(Equal(0.0))
		resp, err := c.Chat.Completions.New(suiteCtx, chatParams("chat-after"))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Choices[0].Message.Content).To(Equal("hello from b"))
		p.logMu.Lock()
		defer p.logMu.Unlock()
		Expect(p.logs).To(ContainElement(And(HaveKeyWithValue("msg", "routing document refused; the previous one keeps serving"), HaveKey("error"))))
	})
})
