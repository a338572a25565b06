/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/modelrouter"
)

func newSecret(ns, name string, data map[string]string) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	Expect(k8sClient.Create(suiteCtx, s)).To(Succeed())
}

func externalAt(name, provider, url, secret string) inferencev1alpha1.Backend {
	b := inferencev1alpha1.Backend{Name: name, External: &inferencev1alpha1.ExternalBackend{Provider: provider, URL: url}}
	if secret != "" {
		b.External.CredentialsSecretRef = &inferencev1alpha1.LocalObjectReference{Name: secret}
	}
	return b
}

func rule(name, backend string, models []string, fallbacks ...string) inferencev1alpha1.RoutingRule {
	return inferencev1alpha1.RoutingRule{Name: name, Models: models, Backend: backend, Fallbacks: fallbacks}
}

// routerReady waits until the operator wrote the router's ConfigMap with every backend named, and
// a Deployment that mounts every credentials Secret the document names.
func routerReady(ns, name string, backends ...string) {
	eventuallyConfigMap(ns, name+"-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
		for _, b := range backends {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(`"name":"` + b + `"`))
		}
	})
	Eventually(func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name + "-router-proxy"}, cm)).To(Succeed())
		d := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name + "-router-proxy"}, d)).To(Succeed())
		doc, err := routingv1.Parse([]byte(cm.Data[modelrouter.ConfigKey]))
		g.Expect(err).NotTo(HaveOccurred())
		mounted := credentialSecrets(d)
		for _, b := range doc.Backends {
			if b.Credentials {
				g.Expect(mounted).To(HaveKey(b.Name))
			}
		}
	}).Should(Succeed())
}

// credentialSecrets are the credentials Secrets the proxy Deployment mounts, by backend.
func credentialSecrets(d *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			for _, item := range src.Secret.Items {
				backend, _, _ := strings.Cut(item.Path, "/")
				out[backend] = src.Secret.Name
			}
		}
	}
	return out
}

func openaiClient(p *proxyProcess, key string, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(p.url("/v1/")), option.WithAPIKey(key), option.WithMaxRetries(0),
	}, opts...)...)
}

func apiError(err error) *openai.Error {
	var e *openai.Error
	ExpectWithOffset(1, errors.As(err, &e)).To(BeTrue(), "an OpenAI-style error, got %v", err)
	return e
}

var _ = Describe("router-proxy, run as the operator's Deployment specifies", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("serves chat, streams without buffering, embeddings, models, fallbacks and credentials to the official OpenAI client [R2, R19]", func() {
		startOperator(ns, controllers.Config{})
		cloud := newFakeOpenAI("cloud", upstreamOK)
		azure := newFakeOpenAI("azure", upstreamOK)
		flaky := newFakeOpenAI("flaky", upstreamStatus)
		newSecret(ns, "cloud-key", map[string]string{"API_KEY": "sk-cloud"})
		newSecret(ns, "azure-key", map[string]string{"API_KEY": "az-secret"})
		newSecret(ns, "client-keys", map[string]string{"team-a": "client-key-1", "team-b": "client-key-2\n"})
		newRouter(ns, "mr", func(r *inferencev1alpha1.ModelRouter) {
			cloudBackend := externalAt("cloud", "openai-compatible", cloud.URL+"/v1", "cloud-key")
			cloudBackend.External.Model = ptr.To("upstream-model")
			r.Spec.Backends = []inferencev1alpha1.Backend{
				cloudBackend,
				externalAt("azure", "azure-openai", azure.URL+"/v1", "azure-key"),
				externalAt("flaky", "openai", flaky.URL+"/v1", ""),
				isvcBackend("ghost", "no-such-isvc"),
			}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{
				rule("gpt", "cloud", []string{"gpt-*"}),
				rule("az", "azure", []string{"azure-model"}),
				rule("fb", "flaky", []string{"fallback-model"}, "cloud"),
				rule("ghost", "ghost", []string{"ghost-model"}),
			}
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{APIKeySecretRef: &inferencev1alpha1.LocalObjectReference{Name: "client-keys"}}
		})
		routerReady(ns, "mr", "cloud", "azure", "flaky")
		p := runProxyAsDeployed(ns, "mr-router-proxy")
		ctx := suiteCtx
		c := openaiClient(p, "client-key-1")
		chat := func(model string) openai.ChatCompletionNewParams {
			return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
		}

		By("chat: routed by a prefix rule, model rewritten, the backend's key sent, the client's never")
		var httpResp *http.Response
		resp, err := c.Chat.Completions.New(ctx, chat("gpt-4o"), option.WithResponseInto(&httpResp))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Choices[0].Message.Content).To(Equal("hello from cloud"))
		Expect(httpResp.Header.Get("X-Llmkube-Backend")).To(Equal("cloud"))
		Expect(httpResp.Header.Get("X-Request-Id")).NotTo(BeEmpty())
		got := cloud.last()
		Expect(got.path).To(Equal("/v1/chat/completions"), "an external URL is an API base: the path after /v1 is appended")
		Expect(got.model).To(Equal("upstream-model"))
		Expect(got.header.Get("Authorization")).To(Equal("Bearer sk-cloud"))
		Expect(got.header.Get("X-Request-Id")).To(Equal(httpResp.Header.Get("X-Request-Id")))

		By("streaming: the client has chunk 1 while the upstream still holds chunk 2")
		release := cloud.holdStreams()
		stream := c.Chat.Completions.NewStreaming(ctx, chat("gpt-4o-mini"), option.WithResponseInto(&httpResp))
		Expect(stream.Next()).To(BeTrue(), "chunk 1: %v", stream.Err())
		Expect(stream.Current().Choices[0].Delta.Content).To(Equal("Hel"))
		Expect(httpResp.Header.Get("X-Accel-Buffering")).To(Equal("no"))
		close(release)
		var rest strings.Builder
		for stream.Next() {
			rest.WriteString(stream.Current().Choices[0].Delta.Content)
		}
		Expect(stream.Err()).NotTo(HaveOccurred())
		Expect(rest.String()).To(Equal("lo"))
		Expect(cloud.heldOut.Load()).To(BeFalse(), "the upstream had to send chunk 2 before the client saw chunk 1: the proxy buffers")
		cloud.hold.Store(nil)

		By("embeddings")
		emb, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "gpt-embed", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
		Expect(err).NotTo(HaveOccurred())
		Expect(emb.Data[0].Embedding).To(Equal([]float64{0.25, 0.5}))
		Expect(cloud.last().path).To(Equal("/v1/embeddings"))

		By("models: every exact model name with an available backend")
		models, err := c.Models.List(ctx)
		Expect(err).NotTo(HaveOccurred())
		var ids []string
		for _, m := range models.Data {
			ids = append(ids, m.ID)
		}
		Expect(ids).To(ConsistOf("azure-model", "fallback-model"))

		By("azure-openai: api-key, and no Authorization at all")
		_, err = c.Chat.Completions.New(ctx, chat("azure-model"))
		Expect(err).NotTo(HaveOccurred())
		Expect(azure.last().header.Get("Api-Key")).To(Equal("az-secret"))
		Expect(azure.last().header.Values("Authorization")).To(BeEmpty())

		By("fallbacks: a 503 goes on to the next backend, which the header names")
		resp, err = c.Chat.Completions.New(ctx, chat("fallback-model"), option.WithResponseInto(&httpResp))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Choices[0].Message.Content).To(Equal("hello from cloud"))
		Expect(httpResp.Header.Get("X-Llmkube-Backend")).To(Equal("cloud"))
		chats := 0 // GET /v1/models above asked every backend for its own list too
		for _, r := range flaky.requests() {
			if r.path == "/v1/chat/completions" {
				chats++
			}
		}
		Expect(chats).To(Equal(1))
		Expect(p.metric(`llmkube_router_fallbacks_total{backend="flaky"}`)).To(Equal(1.0))
		Expect(p.metric(`llmkube_router_upstream_errors_total{backend="flaky",reason="status_5xx"}`)).To(Equal(1.0))

		By("errors in OpenAI's shape: unknown model 404, unresolved backend 503, wrong key 401")
		_, err = c.Chat.Completions.New(ctx, chat("mistral"))
		Expect(apiError(err).StatusCode).To(Equal(404))
		Expect(apiError(err).Code).To(Equal("model_not_found"))
		_, err = c.Chat.Completions.New(ctx, chat("ghost-model"))
		Expect(apiError(err).StatusCode).To(Equal(503))
		wrong := openaiClient(p, "not-a-key")
		_, err = wrong.Chat.Completions.New(ctx, chat("gpt-4o"))
		Expect(apiError(err).StatusCode).To(Equal(401))
		second := openaiClient(p, "client-key-2")
		_, err = second.Models.List(ctx)
		Expect(err).NotTo(HaveOccurred(), "every value of the client key Secret is a key")

		By("one log line per request, without bodies or keys; metrics with bounded labels")
		// The log lines arrive through a pipe: the last request's may still be on its way.
		Eventually(func() []map[string]any { return p.requestLogs() }).Should(HaveLen(10))
		logs := p.requestLogs()
		for _, l := range logs {
			b, _ := json.Marshal(l)
			line := string(b)
			for _, secret := range []string{"sk-cloud", "az-secret", "client-key-1", "hi\"", "messages"} {
				Expect(line).NotTo(ContainSubstring(secret))
			}
			Expect(l).To(HaveKey("backend"))
			Expect(l).To(HaveKey("status"))
			Expect(l).To(HaveKey("ttfbMs"))
		}
		Expect(p.metric(`llmkube_router_requests_total{backend="cloud",client="none",code="200",model="gpt-*"}`)).To(BeNumerically(">=", 3))
		Expect(p.metric(`llmkube_router_requests_total{backend="none",client="none",code="404",model="other"}`)).To(Equal(1.0))

		By("SIGTERM: readiness fails at once, a running stream finishes, then the process exits 0")
		release = cloud.holdStreams()
		stream = c.Chat.Completions.NewStreaming(ctx, chat("gpt-4o"))
		Expect(stream.Next()).To(BeTrue())
		p.terminate()
		Eventually(func() int { return statusOf(p.url("/readyz")) }).Should(Equal(http.StatusServiceUnavailable))
		Expect(statusOf(p.url("/healthz"))).To(Equal(http.StatusOK))
		Eventually(func() int { return statusOf(p.url("/healthz")) }, 15*time.Second).Should(BeZero(),
			"after the shutdown delay the listener closes")
		close(release) // only now: the stream outlives the listener and must still drain
		Expect(cloud.heldOut.Load()).To(BeFalse())
		for stream.Next() {
		}
		Expect(stream.Err()).NotTo(HaveOccurred(), "the in-flight stream is drained, not cut")
		Eventually(p.exited, 20*time.Second).Should(Receive(BeNil()))
	})

	It("answers bad input and broken upstreams with OpenAI-style errors, keeps serving, and leaks no goroutine [R1]", func() {
		startOperator(ns, controllers.Config{})
		ok := newFakeOpenAI("ok", upstreamOK)
		hang := newFakeOpenAI("hang", upstreamHang)
		breaks := newFakeOpenAI("breaks", upstreamBreakOff)
		closed := closedPort()
		newSecret(ns, "client-keys", map[string]string{"k": "good-key"})
		newRouter(ns, "bad", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{
				externalAt("ok", "openai", ok.URL+"/v1", ""),
				externalAt("hang", "openai", hang.URL+"/v1", ""),
				externalAt("breaks", "openai", breaks.URL+"/v1", ""),
				externalAt("closed", "openai", "http://"+closed+"/v1", ""),
			}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{
				rule("hang", "hang", []string{"hang-model"}),
				rule("breaks", "breaks", []string{"breaks-model"}),
				rule("closed", "closed", []string{"closed-model"}),
			}
			r.Spec.DefaultRoute = ptr.To("ok")
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{APIKeySecretRef: &inferencev1alpha1.LocalObjectReference{Name: "client-keys"}}
		})
		routerReady(ns, "bad", "ok", "hang", "breaks", "closed")
		// The one extra arg: a wait of 2 s for a non-streaming answer instead of the default 30 min.
		p := runProxyAsDeployed(ns, "bad-router-proxy", "--request-timeout=2s")
		// A fresh connection per request, so the proxy's goroutines count only what it leaked.
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		send := func(ctx context.Context, key, body string) (*http.Response, []byte, error) {
			req, _ := http.NewRequestWithContext(ctx, "POST", p.url("/v1/chat/completions"), strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp, b, err
		}
		// sendEarly writes the request on a raw connection while it reads the answer: a server that
		// answers 413 before reading the whole body closes the connection under a writing client,
		// which Go's client reports as a broken pipe instead of the answer.
		sendEarly := func(key, body string) (*http.Response, []byte, error) {
			conn, err := net.Dial("tcp", p.addr)
			if err != nil {
				return nil, nil, err
			}
			defer conn.Close()
			go func() {
				_, _ = fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: router\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, len(body))
				_, _ = io.WriteString(conn, body)
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp, b, err
		}
		healthy := func() {
			resp, body, err := send(suiteCtx, "good-key", `{"model":"anything"}`)
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
			ExpectWithOffset(1, resp.StatusCode).To(Equal(200), string(body))
		}
		healthy()
		baseline := p.metric("go_goroutines")
		Expect(baseline).To(BeNumerically(">", 0))

		big := `{"model":"anything","pad":"` + strings.Repeat("x", 33<<20) + `"}`
		for _, tc := range []struct {
			name, key, body string
			status          int
			code            string
			early           bool
		}{
			{"malformed JSON", "good-key", `{"model":`, 400, "invalid_json", false},
			{"no model", "good-key", `{"messages":[]}`, 400, "missing_required_parameter", false},
			{"a model that is not a string", "good-key", `{"model":["gpt"]}`, 400, "invalid_type", false},
			{"a body over 32 MiB", "good-key", big, 413, "request_too_large", true},
			{"a wrong client key", "bad-key", `{"model":"anything"}`, 401, "invalid_api_key", false},
			{"an upstream that hangs before headers", "good-key", `{"model":"hang-model"}`, 504, "upstream_timeout", false},
			{"a closed port", "good-key", `{"model":"closed-model"}`, 502, "upstream_unreachable", false},
		} {
			By(tc.name)
			send := send
			if tc.early {
				send = func(_ context.Context, key, body string) (*http.Response, []byte, error) { return sendEarly(key, body) }
			}
			resp, body, err := send(suiteCtx, tc.key, tc.body)
			Expect(err).NotTo(HaveOccurred(), tc.name)
			Expect(resp.StatusCode).To(Equal(tc.status), "%s: %s", tc.name, body)
			var e struct {
				Error struct{ Message, Type, Code string } `json:"error"`
			}
			Expect(json.Unmarshal(body, &e)).To(Succeed(), "%s: %s", tc.name, body)
			Expect(e.Error.Code).To(Equal(tc.code), tc.name)
			Expect(e.Error.Message).NotTo(BeEmpty())
			healthy()
		}

		By("a client that gives up on a hanging upstream cancels the upstream request at once")
		before := hang.canceled.Load()
		ctx, cancel := context.WithTimeout(suiteCtx, 300*time.Millisecond)
		_, _, err := send(ctx, "good-key", `{"model":"hang-model"}`)
		cancel()
		Expect(err).To(HaveOccurred())
		Eventually(hang.canceled.Load, time.Second).Should(BeNumerically(">", before), "well before the 2 s header timeout")
		healthy()

		By("an upstream that breaks off mid-stream ends the client's stream with an error, no hang")
		c := openaiClient(p, "good-key")
		stream := c.Chat.Completions.NewStreaming(suiteCtx, openai.ChatCompletionNewParams{Model: "breaks-model", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		Expect(stream.Next()).To(BeTrue())
		for stream.Next() {
		}
		Expect(stream.Err()).To(HaveOccurred())
		healthy()
		Expect(p.metric(`llmkube_router_upstream_errors_total{backend="breaks",reason="stream_broken"}`)).To(Equal(1.0))

		By("no goroutine leaked in the proxy across the table")
		Eventually(func() float64 { return p.metric("go_goroutines") }, 10*time.Second).Should(BeNumerically("<=", baseline+2))
	})
})

func statusOf(url string) int {
	resp, err := (&http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Get(url)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// closedPort is a loopback address nothing listens on.
func closedPort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	return addr
}
