/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/test/redisserver"
)

// limitedRouter is a router whose default route is an OpenAI backend at upstream, with the client
// keys Secret "client-keys" (team-a: key-a, team-b: key-b, free: key-free), client team-a
// limited as mutate says.
func limitedRouter(ns, upstream string, mutate func(*inferencev1alpha1.ModelRouter)) {
	newSecret(ns, "client-keys", map[string]string{"team-a": "key-a", "team-b": "key-b", "free": "key-free"})
	newRouter(ns, "mr", func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Backends = []inferencev1alpha1.Backend{externalAt("cloud", "openai", upstream+"/v1", "")}
		r.Spec.DefaultRoute = ptr.To("cloud")
		r.Spec.Proxy = &inferencev1alpha1.ProxySpec{APIKeySecretRef: &inferencev1alpha1.LocalObjectReference{Name: "client-keys"}}
		r.Spec.Clients = []inferencev1alpha1.RouterClient{
			{Name: "team-a", SecretKeys: []string{"team-a"}, Limits: &inferencev1alpha1.ClientLimits{}},
			{Name: "team-b", SecretKeys: []string{"team-b"}, Models: []string{"gpt-4o-mini", "llama-*"}},
		}
		mutate(r)
	})
	routerReady(ns, "mr", "cloud")
	eventuallyConfigMap(ns, "mr-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
		g.Expect(cm.Data[modelrouter.ConfigKey]).To(ContainSubstring(`"clients"`))
	})
}

// limitsWorld starts the operator for ns, a redis-server (with password when not empty) and a
// fake OpenAI upstream.
func limitsWorld(ns, password string) (*redisserver.Server, *fakeOpenAI) {
	startOperator(ns, controllers.Config{})
	return redisserver.Start(GinkgoT(), password), newFakeOpenAI("cloud", upstreamOK)
}

// chat sends one chat completion with key to p, and returns the response with its body read.
func chat(p *proxyProcess, key, body string) (*http.Response, string) {
	req, err := http.NewRequest(http.MethodPost, p.url("/v1/chat/completions"), strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const smallChat = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`

var _ = Describe("Client limits", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("counts in one Redis for two proxy processes: 60 requests per minute across both admit 60 plus what refills meanwhile, not 120, and the OpenAI client backs off by itself on the 429 [L3, L4, L1]", func() {
		redis, cloud := limitsWorld(ns, "redis-pass-1")
		newSecret(ns, "redis-auth", map[string]string{"password": "redis-pass-1"})
		limitedRouter(ns, cloud.URL, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Proxy.Replicas = ptr.To(int32(2))
			r.Spec.Clients[0].Limits.RequestsPerMinute = ptr.To(int64(60))
			r.Spec.Limits = &inferencev1alpha1.LimitsSpec{Redis: &inferencev1alpha1.RedisSpec{
				Address: redis.Addr, PasswordSecretRef: &inferencev1alpha1.SecretKeySelector{Name: "redis-auth", Key: "password"}}}
		})
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getRouter(ns, "mr").Status.Conditions, modelrouter.ConditionLimitsShared)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(BeEquivalentTo("True"))
		}).Should(Succeed())
		procs := []*proxyProcess{runProxyAsDeployed(ns, "mr-router-proxy"), runProxyAsDeployed(ns, "mr-router-proxy")}

		var ok, refused atomic.Int64
		var first429 atomic.Pointer[http.Response]
		var body429 atomic.Pointer[string]
		start := time.Now()
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := range 20 {
					resp, body := chat(procs[(w+i)%2], "key-a", smallChat)
					switch resp.StatusCode {
					case http.StatusOK:
						ok.Add(1)
						Expect(resp.Header.Get("X-Ratelimit-Limit-Requests")).To(Equal("60"))
					case http.StatusTooManyRequests:
						refused.Add(1)
						if first429.CompareAndSwap(nil, resp) {
							body429.Store(&body)
						}
					default:
						Fail(fmt.Sprintf("status %d: %s", resp.StatusCode, body))
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		By(fmt.Sprintf("160 requests in %v: %d admitted, %d refused", elapsed, ok.Load(), refused.Load()))
		// One request refills per second (60 per minute): what passed beyond 60 is what refilled.
		Expect(ok.Load()).To(BeNumerically(">=", 60))
		Expect(ok.Load()).To(BeNumerically("<=", 60+int64(elapsed.Seconds())+1), "the two replicas let more through than one shared limit")

		resp := first429.Load()
		Expect(resp).NotTo(BeNil())
		Expect(resp.Header.Get("Retry-After")).To(Equal("1"))
		Expect(resp.Header.Get("X-Ratelimit-Limit-Requests")).To(Equal("60"))
		Expect(resp.Header.Get("X-Ratelimit-Remaining-Requests")).To(Equal("0"))
		Expect(resp.Header.Get("X-Ratelimit-Reset-Requests")).To(MatchRegexp(`^[0-9.]+m?s$`))
		var e struct {
			Error struct{ Message, Type, Code string }
		}
		Expect(json.Unmarshal([]byte(*body429.Load()), &e)).To(Succeed())
		Expect(e.Error.Code).To(Equal("rate_limit_exceeded"))
		Expect(e.Error.Type).To(Equal("requests"))
		Expect(e.Error.Message).To(ContainSubstring("requests per minute"))

		By("the official OpenAI client: without retries it sees the 429 and its headers; with them it waits Retry-After and gets its answer")
		noRetry := openaiClient(procs[1], "key-a")
		var err error
		Eventually(func() error { // each success spends what refilled
			_, err = noRetry.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
			return err
		}).Should(HaveOccurred())
		oe := apiError(err)
		Expect(oe.StatusCode).To(Equal(http.StatusTooManyRequests))
		Expect(oe.Code).To(Equal("rate_limit_exceeded"))
		Expect(oe.Response.Header.Get("Retry-After")).NotTo(BeEmpty())
		var attempts atomic.Int32
		retrying := openaiClient(procs[1], "key-a", option.WithMaxRetries(3), option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			attempts.Add(1)
			return next(r)
		}))
		t0 := time.Now()
		got, err := retrying.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Choices[0].Message.Content).To(Equal("hello from cloud"))
		Expect(attempts.Load()).To(BeNumerically(">=", 2), "the client was refused first")
		Expect(time.Since(t0)).To(BeNumerically(">=", 500*time.Millisecond), "the client waited for Retry-After")

		By("the client label: team-a by its name, a key of no client as none [L1]")
		Expect(procs[0].metric(`llmkube_router_requests_total{backend="cloud",client="team-a",code="200",model="other"}`) +
			procs[1].metric(`llmkube_router_requests_total{backend="cloud",client="team-a",code="200",model="other"}`)).To(BeNumerically(">=", 61))
		resp, _ = chat(procs[0], "key-free", smallChat)
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("X-Ratelimit-Limit-Requests")).To(BeEmpty(), "a key of no client has no limits")
		Expect(procs[0].metric(`llmkube_router_requests_total{backend="cloud",client="none",code="200",model="other"}`)).To(Equal(1.0))
		for _, r := range cloud.requests() {
			Expect(r.header.Get("Authorization")).To(BeEmpty(), "a client key went upstream")
			for k := range r.header {
				Expect(strings.ToLower(k)).NotTo(HavePrefix("x-ratelimit"), "limit state went upstream")
			}
		}
	})

	It("charges a token limit what the backend metered, for streamed and non-streamed answers, and refuses a model the client may not use with 403 [L5, L2]", func() {
		redis, cloud := limitsWorld(ns, "")
		limitedRouter(ns, cloud.URL, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Clients[0].Limits.TokensPerMinute = ptr.To(int64(60000))
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("gpt", "cloud", []string{"gpt-4o", "gpt-4o-mini"})}
			r.Spec.Limits = &inferencev1alpha1.LimitsSpec{Redis: &inferencev1alpha1.RedisSpec{Address: redis.Addr}}
		})
		p := runProxyAsDeployed(ns, "mr-router-proxy")
		sent := 0.0
		remaining := func(body string) int64 {
			resp, b := chat(p, "key-a", body)
			Expect(resp.StatusCode).To(Equal(http.StatusOK), b)
			sent++ // its charge reaches Redis after the answer, in the settlement worker's next batch
			Eventually(func() float64 { return p.metric(`llmkube_router_limits_settled_total`) }).Should(Equal(sent))
			n, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Remaining-Tokens"), 10, 64)
			Expect(err).NotTo(HaveOccurred())
			return n
		}
		// Each admission shows what remains after its own reservation (the prompt's estimate and
		// max_tokens: about 1000 here); the next one shows the previous request's reservation
		// replaced by what it used: remaining(1) - remaining(2) = metered - refill, where 60000
		// per minute refill one token per millisecond between the two.
		plain := `{"model":"gpt-4o","max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`
		stream := `{"model":"gpt-4o","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
		for _, c := range []struct {
			name, body string
			metered    int64
		}{{"non-streamed", plain, 4}, {"streamed", stream, 5}} {
			By(c.name)
			diff := remaining(c.body) - remaining(plain)
			Expect(diff).To(BeNumerically("<=", c.metered+1), "charged more than the metered usage")
			Expect(diff).To(BeNumerically(">=", c.metered-40), "the reservation was not replaced by the metered usage (%d)", diff)
		}
		Expect(p.metric(`llmkube_router_tokens_total{backend="cloud",client="team-a",model="gpt-4o",type="output"}`)).To(BeNumerically(">=", 3+2))

		By("a model outside the client's list is 403 model_not_found; inside it, served")
		resp, body := chat(p, "key-b", smallChat)
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden), body)
		Expect(body).To(ContainSubstring(`"code":"model_not_found"`))
		Expect(body).To(ContainSubstring(`does not have access to model \"gpt-4o\"`))
		resp, body = chat(p, "key-b", `{"model":"llama-3","messages":[]}`)
		Expect(resp.StatusCode).To(Equal(http.StatusOK), body)

		By("GET /v1/models lists a client only the models it may use, and /v1/models/{id} of another is 404")
		models := func(key, path string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, p.url(path), nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		_, body = models("key-b", "/v1/models")
		Expect(body).To(ContainSubstring(`"id":"gpt-4o-mini"`))
		Expect(body).NotTo(ContainSubstring(`"id":"gpt-4o"`))
		_, body = models("key-a", "/v1/models")
		Expect(body).To(ContainSubstring(`"id":"gpt-4o"`))
		code, _ := models("key-b", "/v1/models/gpt-4o")
		Expect(code).To(Equal(http.StatusNotFound))
		code, _ = models("key-b", "/v1/models/gpt-4o-mini")
		Expect(code).To(Equal(http.StatusOK))
	})

	It("gives the configured failure mode within the Redis timeout while Redis is down, and enforces again once it is back, with the window it had [L6]", func() {
		redis, cloud := limitsWorld(ns, "")
		limitedRouter(ns, cloud.URL, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Clients[0].Limits.RequestsPerMinute = ptr.To(int64(3))
			r.Spec.Limits = &inferencev1alpha1.LimitsSpec{FailureMode: ptr.To(inferencev1alpha1.LimitsFailClosed),
				Redis: &inferencev1alpha1.RedisSpec{Address: redis.Addr, Timeout: ptr.To("200ms")}}
		})
		p := runProxyAsDeployed(ns, "mr-router-proxy")
		for range 3 {
			resp, body := chat(p, "key-a", smallChat)
			Expect(resp.StatusCode).To(Equal(http.StatusOK), body)
		}
		resp, _ := chat(p, "key-a", smallChat)
		Expect(resp.StatusCode).To(Equal(http.StatusTooManyRequests))
		// spent: the first answer that Redis decided again (it has the limit headers) is a 429:
		// the spent window survived the restart.
		spent := func() {
			GinkgoHelper()
			var resp *http.Response
			var body string
			Eventually(func() string {
				resp, body = chat(p, "key-a", smallChat)
				return resp.Header.Get("X-Ratelimit-Limit-Requests")
			}).WithTimeout(10 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal("3"))
			Expect(resp.StatusCode).To(Equal(http.StatusTooManyRequests), body)
			Expect(body).To(ContainSubstring("rate_limit_exceeded"))
		}

		By("fail-closed: Redis stopped, requests get 503 with Retry-After, each within the timeout")
		redis.Stop()
		for range 3 {
			t0 := time.Now()
			resp, body := chat(p, "key-a", smallChat)
			Expect(time.Since(t0)).To(BeNumerically("<", time.Second))
			Expect(resp.StatusCode).To(Equal(http.StatusServiceUnavailable), body)
			Expect(body).To(ContainSubstring("limits_unavailable"))
			Expect(resp.Header.Get("Retry-After")).To(Equal("1"))
		}
		Expect(p.metric(`llmkube_router_limits_store_errors_total{result="fail_closed"}`)).To(BeNumerically(">=", 1))
		By("Redis back (its append-only file kept the spent window): refused again as rate-limited")
		redis.Start()
		spent()

		By("fail-open: the router changed to FailOpen, Redis stopped, requests pass unlimited and say so")
		editRouter(ns, "mr", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Limits.FailureMode = ptr.To(inferencev1alpha1.LimitsFailOpen)
		})
		cm := eventuallyConfigMap(ns, "mr-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data[modelrouter.ConfigKey]).NotTo(ContainSubstring(`"failClosed"`))
		})
		p.remount("config", cm.Data)
		Eventually(func() float64 { return p.metric(`llmkube_router_config_reloads_total{result="applied"}`) }).Should(BeNumerically(">=", 1))
		redis.Stop()
		Eventually(func(g Gomega) {
			resp, body := chat(p, "key-a", smallChat)
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK), body)
			g.Expect(resp.Header.Get("X-Ratelimit-Limit-Requests")).To(BeEmpty())
		}).WithTimeout(5 * time.Second).Should(Succeed())
		Expect(p.metric(`llmkube_router_limits_store_errors_total{result="fail_open"}`)).To(BeNumerically(">=", 1))
		Expect(p.metric(`llmkube_router_limits_store_up`)).To(Equal(0.0))
		Expect(logged(p, "limits store does not answer")).To(BeTrue())
		redis.Start()
		spent()
		Expect(p.metric(`llmkube_router_limits_store_up`)).To(Equal(1.0))
	})
})

// logged says the proxy wrote a log line with msg starting with prefix.
func logged(p *proxyProcess, prefix string) bool {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	for _, l := range p.logs {
		if m, _ := l["msg"].(string); strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}
