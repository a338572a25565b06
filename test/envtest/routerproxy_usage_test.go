/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// meteredUpstream is a chat server on 127.0.0.1 with the habits that broke metering: strict
// refuses a body with stream_options as servers that reject unknown fields do (Azure OpenAI
// before api-version 2024-09-01); gzip compresses whenever the request accepts gzip; sized sends
// a stream with a Content-Length. The model picks the stream's shape: "spaced" is JSON with
// spaces after colons, "tools" a tool call without content; anything else two content chunks.
type meteredUpstream struct {
	*httptest.Server
	strict, gzip, sized bool
	mu                  sync.Mutex
	bodies              []string
	encodings           []string
}

func newMeteredUpstream(configure func(*meteredUpstream)) *meteredUpstream {
	u := &meteredUpstream{}
	configure(u)
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	DeferCleanup(u.Close)
	return u
}

func (u *meteredUpstream) last() (body, acceptEncoding string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		return "", ""
	}
	return u.bodies[len(u.bodies)-1], u.encodings[len(u.encodings)-1]
}

func (u *meteredUpstream) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	body := string(raw)
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.encodings = append(u.encodings, r.Header.Get("Accept-Encoding"))
	u.mu.Unlock()
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(raw, &req)
	if u.strict && strings.Contains(body, "stream_options") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	var out, contentType string
	switch {
	case !req.Stream:
		contentType = "application/json"
		out = fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}`, req.Model)
	default:
		contentType = "text/event-stream"
		head := `data: {"id":"s1","object":"chat.completion.chunk","created":1,"model":"` + req.Model + `","choices":`
		switch req.Model {
		case "spaced":
			out = head + `[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}` + "\n\n" +
				head + `[{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]}` + "\n\n" +
				head + `[{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]}` + "\n\n"
		case "tools":
			out = head + `[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}` + "\n\n" +
				head + `[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}` + "\n\n" +
				head + `[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n"
		default:
			out = head + `[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}` + "\n\n" +
				head + `[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}` + "\n\n"
		}
		if strings.Contains(body, `"include_usage":true`) {
			out += head + `[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n"
		}
		out += "data: [DONE]\n\n"
	}
	w.Header().Set("Content-Type", contentType)
	if u.gzip && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = io.WriteString(zw, out)
		_ = zw.Close()
		out = z.String()
		w.Header().Set("Content-Encoding", "gzip")
	}
	if u.sized {
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	_, _ = io.WriteString(w, out)
}

// streamChat streams a chat through the official client and returns the chunks and the error.
func streamChat(c openai.Client, model string) ([]openai.ChatCompletionChunk, error) {
	s := c.Chat.Completions.NewStreaming(suiteCtx, chatParams(model))
	var chunks []openai.ChatCompletionChunk
	for s.Next() {
		chunks = append(chunks, s.Current())
	}
	return chunks, s.Err()
}

var _ = Describe("router-proxy: metering that never breaks a request", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		startOperator(ns, controllers.Config{})
	})

	It("writes spec.backends[].streamUsage into the routing document: Auto asks only backends known to accept it [R21]", func() {
		newISVC(ns, "vllm", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = inferencev1alpha1.RuntimeVLLM })
		newISVC(ns, "tgi", func(i *inferencev1alpha1.InferenceService) { i.Spec.Runtime = inferencev1alpha1.RuntimeTGI })
		newRouter(ns, "usage", func(r *inferencev1alpha1.ModelRouter) {
			never := externalAt("openai-never", "openai", "https://api.openai.com/v1", "")
			never.StreamUsage = ptr.To(inferencev1alpha1.StreamUsageNever)
			always := externalAt("compatible-always", "openai-compatible", "https://llm.example.com/v1", "")
			always.StreamUsage = ptr.To(inferencev1alpha1.StreamUsageAlways)
			r.Spec.Backends = []inferencev1alpha1.Backend{
				externalAt("openai", "openai", "https://api.openai.com/v1", ""),
				externalAt("azure-old", "azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-06-01", ""),
				externalAt("azure-new", "azure-openai", "https://x.openai.azure.com/openai/deployments/gpt?api-version=2024-10-21", ""),
				externalAt("compatible", "openai-compatible", "https://llm.example.com/v1", ""),
				never, always, isvcBackend("vllm", "vllm"), isvcBackend("tgi", "tgi"),
			}
		})
		asked := func(g Gomega) map[string]bool {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "usage-router-proxy"}, cm)).To(Succeed())
			doc, err := routingv1.Parse([]byte(cm.Data[modelrouter.ConfigKey]))
			g.Expect(err).NotTo(HaveOccurred())
			out := map[string]bool{}
			for _, b := range doc.Backends {
				out[b.Name] = b.StreamUsage
			}
			return out
		}
		Eventually(asked).Should(Equal(map[string]bool{
			"openai": true, "azure-old": false, "azure-new": true, "compatible": false,
			"openai-never": false, "compatible-always": true, "vllm": true, "tgi": false,
		}))

		By("a change of the field reaches the document")
		editRouter(ns, "usage", func(r *inferencev1alpha1.ModelRouter) {
			for i := range r.Spec.Backends {
				if r.Spec.Backends[i].Name == "tgi" {
					r.Spec.Backends[i].StreamUsage = ptr.To(inferencev1alpha1.StreamUsageAlways)
				}
			}
		})
		Eventually(func(g Gomega) bool { return asked(g)["tgi"] }).Should(BeTrue())
	})

	It("streams from a server that refuses unknown fields: stream_options is not added, and its output tokens are estimated [R21]", func() {
		strict := newMeteredUpstream(func(u *meteredUpstream) { u.strict = true })
		newRouter(ns, "strict", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{externalAt("strict", "openai-compatible", strict.URL+"/v1", "")}
			r.Spec.DefaultRoute = ptr.To("strict")
		})
		routerReady(ns, "strict", "strict")
		p := runProxyAsDeployed(ns, "strict-router-proxy")
		chunks, err := streamChat(openaiClient(p, ""), "m")
		Expect(err).NotTo(HaveOccurred())
		Expect(chunks).To(HaveLen(2))
		body, _ := strict.last()
		Expect(body).NotTo(ContainSubstring("stream_options"))
		Eventually(func() float64 {
			return p.metric(`llmkube_router_estimated_output_tokens_total{backend="strict",model="other"}`)
		}).Should(Equal(2.0))
		Expect(p.metric(`llmkube_router_tokens_total{backend="strict",client="none",model="other",type="output"}`)).To(Equal(-1.0), "an estimate is not reported usage")
	})

	It("reads the tokens of an upstream that compresses when asked, and never truncates a stream with a Content-Length [R22]", func() {
		gz := newMeteredUpstream(func(u *meteredUpstream) { u.gzip = true })
		sized := newMeteredUpstream(func(u *meteredUpstream) { u.sized = true })
		newRouter(ns, "meter", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{
				externalAt("gz", "openai", gz.URL+"/v1", ""),
				externalAt("sized", "openai", sized.URL+"/v1", ""),
			}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("sized", "sized", []string{"sized-*"})}
			r.Spec.DefaultRoute = ptr.To("gz")
		})
		routerReady(ns, "meter", "gz", "sized")
		p := runProxyAsDeployed(ns, "meter-router-proxy")
		c := openaiClient(p, "") // Go's transport asks for gzip, as the OpenAI SDKs do

		By("a compressing upstream is asked for identity: the tokens of an answer and a stream count")
		_, err := c.Chat.Completions.New(suiteCtx, chatParams("m"))
		Expect(err).NotTo(HaveOccurred())
		_, enc := gz.last()
		Expect(enc).To(Equal("identity"))
		chunks, err := streamChat(c, "m")
		Expect(err).NotTo(HaveOccurred())
		Expect(chunks).To(HaveLen(2), "the client did not ask for the usage chunk")
		tokens := func(typ string) float64 {
			return p.metric(`llmkube_router_tokens_total{backend="gz",client="none",model="other",type="` + typ + `"}`)
		}
		Eventually(func() []float64 { return []float64{tokens("input"), tokens("output")} }).Should(Equal([]float64{7 + 3, 1 + 2}))
		Eventually(func() float64 {
			return p.metric(`llmkube_router_time_to_first_token_seconds_count{backend="gz"}`)
		}).Should(Equal(1.0))

		By("a stream sent with a Content-Length, its usage chunk hidden, arrives whole")
		for range 5 {
			chunks, err = streamChat(c, "sized-m")
			Expect(err).NotTo(HaveOccurred())
			Expect(chunks).To(HaveLen(2))
			Expect(chunks[0].Choices[0].Delta.Content + chunks[1].Choices[0].Delta.Content).To(Equal("Hello"))
		}
		body, _ := sized.last()
		Expect(body).To(ContainSubstring(`"include_usage":true`))
		// The OpenAI client stops at [DONE]; a client that reads to the end of the body (curl,
		// httpx) must not find it cut short.
		resp, err := http.Post(p.url("/v1/chat/completions"), "application/json", strings.NewReader(`{"model":"sized-m","stream":true,"messages":[]}`))
		Expect(err).NotTo(HaveOccurred())
		whole, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		Expect(err).NotTo(HaveOccurred(), "read %q", whole)
		Expect(string(whole)).To(HaveSuffix("data: [DONE]\n\n"))
		Expect(string(whole)).NotTo(ContainSubstring(`"usage"`))
	})

	It("records the time to first token of spaced JSON and of tool-call-only streams [R23]", func() {
		up := newMeteredUpstream(func(*meteredUpstream) {})
		newRouter(ns, "ttft", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{externalAt("up", "openai", up.URL+"/v1", "")}
			r.Spec.DefaultRoute = ptr.To("up")
		})
		routerReady(ns, "ttft", "up")
		p := runProxyAsDeployed(ns, "ttft-router-proxy")
		c := openaiClient(p, "")
		chunks, err := streamChat(c, "spaced")
		Expect(err).NotTo(HaveOccurred())
		Expect(chunks).To(HaveLen(3))
		chunks, err = streamChat(c, "tools")
		Expect(err).NotTo(HaveOccurred())
		Expect(chunks).To(HaveLen(3))
		Expect(chunks[1].Choices[0].Delta.ToolCalls[0].Function.Arguments).To(Equal(`{"city":"Paris"}`))
		Eventually(func() float64 {
			return p.metric(`llmkube_router_time_to_first_token_seconds_count{backend="up"}`)
		}).Should(Equal(2.0))
		Eventually(func() float64 {
			return p.metric(`llmkube_router_time_per_output_token_seconds_count{backend="up"}`)
		}).Should(Equal(2.0), "both streams report 2 output tokens")
	})
})
