/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

var _ = Describe("router-proxy: the OpenAI API beyond chat, and token accounting", func() {
	It("routes Responses, audio, images, rerank, score and tokenize by model, and counts tokens [R3]", func() {
		ns := newNamespace()
		startOperator(ns, controllers.Config{})
		cloud := newFakeOpenAI("cloud", upstreamOK)
		local := newFakeOpenAI("local", upstreamOK)
		newRouter(ns, "api", func(r *inferencev1alpha1.ModelRouter) {
			localBackend := externalAt("local", "openai-compatible", local.URL+"/v1", "")
			localBackend.External.Model = ptr.To("large-v3")
			cloudBackend := externalAt("cloud", "openai-compatible", cloud.URL+"/v1", "")
			cloudBackend.StreamUsage = ptr.To(inferencev1alpha1.StreamUsageAlways) // an openai-compatible server is not known to accept stream_options
			r.Spec.Backends = []inferencev1alpha1.Backend{cloudBackend, localBackend}
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{
				rule("gpt", "cloud", []string{"gpt-*"}),
				rule("local", "local", []string{"whisper-1", "bge-*"}),
			}
		})
		routerReady(ns, "api", "cloud", "local")
		p := runProxyAsDeployed(ns, "api-router-proxy", "--max-body-bytes=1048576")
		ctx := suiteCtx
		c := openaiClient(p, "")

		By("Responses, not streamed and streamed: named events pass as they come")
		resp, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.OutputText()).To(Equal("hello from cloud"))
		Expect(cloud.last().path).To(Equal("/v1/responses"))
		rs := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-5", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		var types []string
		var text strings.Builder
		for rs.Next() {
			types = append(types, rs.Current().Type)
			text.WriteString(rs.Current().Delta)
		}
		Expect(rs.Err()).NotTo(HaveOccurred())
		Expect(types).To(Equal([]string{"response.created", "response.output_text.delta", "response.output_text.delta", "response.completed"}))
		Expect(text.String()).To(Equal("Hello"))

		By("a transcription: the model is the form's field, rewritten for the backend; the file arrives byte for byte")
		audio := make([]byte, 0, 300<<10)
		for i := range 300 << 10 {
			audio = append(audio, byte(i*7+i/251))
		}
		audio = append(audio, []byte("\r\n--fake-boundary\r\n\r\n")...)
		tr, err := c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
			File: openai.File(bytes.NewReader(audio), "a.wav", "audio/wav"), Model: openai.AudioModelWhisper1, Language: openai.String("en"),
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(tr.Text).To(Equal("heard by local"))
		got := local.last()
		Expect(got.path).To(Equal("/v1/audio/transcriptions"))
		Expect(got.model).To(Equal("large-v3"))
		Expect(bytes.Equal(got.file, audio)).To(BeTrue(), "the file part changed on the way (%d bytes, sent %d)", len(got.file), len(audio))
		Expect(got.header.Get("Content-Type")).To(HavePrefix("multipart/form-data; boundary="))

		By("the body limit applies to a form: 413 in OpenAI's shape, nothing sent")
		sent := len(local.requests())
		_, err = c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
			File: openai.File(bytes.NewReader(make([]byte, 2<<20)), "big.wav", "audio/wav"), Model: openai.AudioModelWhisper1,
		})
		Expect(apiError(err).StatusCode).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(apiError(err).Code).To(Equal("request_too_large"))
		Expect(local.requests()).To(HaveLen(sent))

		By("speech and images (JSON)")
		speech, err := c.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: "gpt-4o-mini-tts", Input: "hi", Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}})
		Expect(err).NotTo(HaveOccurred())
		mp3, _ := io.ReadAll(speech.Body)
		_ = speech.Body.Close()
		Expect(string(mp3)).To(Equal("ID3-cloud"))
		Expect(cloud.last().path).To(Equal("/v1/audio/speech"))
		_, err = c.Images.Generate(ctx, openai.ImageGenerateParams{Model: "gpt-image-1", Prompt: "a cat"})
		Expect(err).NotTo(HaveOccurred())
		Expect(cloud.last().path).To(Equal("/v1/images/generations"))

		By("rerank, score, tokenize and detokenize (no call in the OpenAI client: plain HTTP)")
		for path, want := range map[string]string{
			"/v1/rerank": "/v1/rerank", "/rerank": "/rerank", "/v2/rerank": "/v2/rerank", "/v1/score": "/v1/score",
			"/score": "/score", "/tokenize": "/tokenize", "/detokenize": "/detokenize",
		} {
			r, err := http.Post(p.url(path), "application/json", strings.NewReader(`{"model":"bge-reranker","query":"q","documents":["a"]}`))
			Expect(err).NotTo(HaveOccurred())
			var echo struct{ Backend, Path, Model string }
			Expect(json.NewDecoder(r.Body).Decode(&echo)).To(Succeed())
			_ = r.Body.Close()
			Expect(r.StatusCode).To(Equal(http.StatusOK), path)
			Expect(echo).To(Equal(struct{ Backend, Path, Model string }{"local", want, "large-v3"}), path)
		}

		By("an unknown path: 404 in OpenAI's shape, naming the path")
		r, err := http.Post(p.url("/v1/fine_tuning/jobs"), "application/json", strings.NewReader(`{"model":"gpt-5"}`))
		Expect(err).NotTo(HaveOccurred())
		var e struct {
			Error struct{ Message, Code string }
		}
		Expect(json.NewDecoder(r.Body).Decode(&e)).To(Succeed())
		_ = r.Body.Close()
		Expect(r.StatusCode).To(Equal(http.StatusNotFound))
		Expect(e.Error.Message).To(ContainSubstring("/v1/fine_tuning/jobs"))

		tokens := func(typ string) float64 {
			return max(0, p.metric(`llmkube_router_tokens_total{backend="cloud",client="none",model="gpt-*",type="`+typ+`"}`))
		}
		By("tokens from the usage of a non-streaming answer")
		in, out := tokens("input"), tokens("output")
		chat := openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
		_, err = c.Chat.Completions.New(ctx, chat)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []float64 { return []float64{tokens("input") - in, tokens("output") - out} }).Should(Equal([]float64{1, 3}))

		By("a stream whose client did not ask for usage: the proxy asks, counts, and the client gets no chunk it did not ask for")
		in, out = tokens("input"), tokens("output")
		stream := c.Chat.Completions.NewStreaming(ctx, chat)
		var chunks []openai.ChatCompletionChunk
		for stream.Next() {
			chunks = append(chunks, stream.Current())
		}
		Expect(stream.Err()).NotTo(HaveOccurred())
		Expect(cloud.last().body).To(ContainSubstring(`"include_usage":true`), "the proxy asks the upstream for the usage")
		Expect(chunks).To(HaveLen(2))
		for _, ch := range chunks {
			Expect(ch.Choices).NotTo(BeEmpty(), "a chunk the client did not ask for: %s", ch.RawJSON())
		}
		Eventually(func() []float64 { return []float64{tokens("input") - in, tokens("output") - out} }).Should(Equal([]float64{3, 2}))

		By("a client that asked for usage gets its chunk")
		chat.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream = c.Chat.Completions.NewStreaming(ctx, chat)
		chunks = nil
		for stream.Next() {
			chunks = append(chunks, stream.Current())
		}
		Expect(stream.Err()).NotTo(HaveOccurred())
		Expect(chunks).To(HaveLen(3))
		Expect(chunks[2].Usage.TotalTokens).To(Equal(int64(5)))

		By("Responses usage counts too; token latencies of the streams; token counts in the log line")
		// A request's metrics are recorded when its handler returns, which may be just after the
		// client read the end of the stream.
		Eventually(func() float64 { return tokens("input") }).Should(Equal(float64(11 + 6 + 1 + 3 + 3)))
		Eventually(func() float64 {
			return p.metric(`llmkube_router_time_to_first_token_seconds_count{backend="cloud"}`)
		}).Should(Equal(3.0), "the Responses stream and the two chat streams")
		Eventually(func() float64 {
			return p.metric(`llmkube_router_time_per_output_token_seconds_count{backend="cloud"}`)
		}).Should(Equal(3.0))
		Eventually(func(g Gomega) {
			var withTokens int
			for _, l := range p.requestLogs() {
				if l["path"] == "/v1/chat/completions" && l["outputTokens"] != nil {
					withTokens++
				}
			}
			g.Expect(withTokens).To(Equal(3))
		}).Should(Succeed())
	})
})
