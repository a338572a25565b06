/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

// Issue 37, items 8, 10, 11 and 12: the proxy parses and relays as the protocols do.
var _ = Describe("Router proxy, parsing and relaying like the protocols", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		startOperator(ns, controllers.Config{})
	})

	// oneBackend runs the proxy of a router whose default route is backend.
	oneBackend := func(backend inferencev1alpha1.Backend, extra ...string) *proxyProcess {
		newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = []inferencev1alpha1.Backend{backend}
			r.Spec.DefaultRoute = &backend.Name
		})
		routerReady(ns, "r", backend.Name)
		return runProxyAsDeployed(ns, "r-router-proxy", extra...)
	}

	It("sends an external API its base URL's query and none of the client's [R28]", func() {
		az := newFakeOpenAI("az", upstreamOK)
		p := oneBackend(externalAt("az", "azure-openai", az.URL+"/v1?api-version=2024-10-21", ""))
		resp, err := http.Post(p.url("/v1/chat/completions?api-version=2099-01-01&debug=1"), "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
		Expect(err).NotTo(HaveOccurred())
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(200))
		Expect(az.last().query).To(Equal("api-version=2024-10-21"))
	})

	It("flushes speech audio streamed without SSE as it arrives [R29]", func() {
		release := make(chan struct{})
		tts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "audio/mpeg")
			_, _ = io.WriteString(w, "ID3-first-frame")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-time.After(15 * time.Second):
			}
			_, _ = io.WriteString(w, "-rest")
		}))
		DeferCleanup(tts.Close)
		DeferCleanup(func() { close(release) })
		p := oneBackend(externalAt("tts", "openai-compatible", tts.URL+"/v1", ""))
		c := openaiClient(p, "")
		start := time.Now()
		resp, err := c.Audio.Speech.New(suiteCtx, openai.AudioSpeechNewParams{Model: "tts-1", Input: "hi", Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}})
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		first := make([]byte, len("ID3-first-frame"))
		_, err = io.ReadFull(resp.Body, first)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(first)).To(Equal("ID3-first-frame"))
		Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second), "the first audio bytes waited for the rest")
		close(release)
		release = make(chan struct{})
		rest, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(rest)).To(Equal("-rest"))
	})

	It("says once, in the log and the metrics, that the routing document is unreadable, and serves the previous one [R30]", func() {
		a := newFakeOpenAI("a", upstreamOK)
		p := oneBackend(externalAt("a", "openai-compatible", a.URL+"/v1", ""), "--config-reload-interval=100ms")
		c := openaiClient(p, "")
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "r-router-proxy"}, cm)).To(Succeed())

		By("the key vanishes from the mounted ConfigMap")
		p.remount("config", map[string]string{"other.json": "{}"})
		Expect(os.Remove(filepath.Join(p.volumes["config"], "config.json"))).To(Succeed())
		Eventually(func() float64 { return p.metric(`llmkube_router_config_reloads_total{result="unreadable"}`) }).Should(Equal(1.0))
		Expect(p.metric(`llmkube_router_config_last_reload_successful`)).To(Equal(0.0))
		time.Sleep(500 * time.Millisecond)
		Expect(p.metric(`llmkube_router_config_reloads_total{result="unreadable"}`)).To(Equal(1.0), "counted once per change, not per tick")
		_, err := c.Chat.Completions.New(suiteCtx, chatParams("m"))
		Expect(err).NotTo(HaveOccurred(), "the previous document keeps serving")

		By("the document is back: the reload reads successful again")
		p.remount("config", cm.Data)
		Eventually(func() float64 { return p.metric(`llmkube_router_config_last_reload_successful`) }).Should(Equal(1.0))
		p.logMu.Lock()
		defer p.logMu.Unlock()
		n := 0
		for _, l := range p.logs {
			if l["msg"] == "routing document unreadable; the previous one keeps serving" {
				n++
			}
		}
		Expect(n).To(Equal(1))
	})

	It("routes a form on the model a Go backend reads, and refuses what mime/multipart refuses [R31]", func() {
		cloud := newFakeOpenAI("cloud", upstreamOK)
		p := oneBackend(externalAt("cloud", "openai-compatible", cloud.URL+"/v1", ""))
		model := "Content-Disposition: form-data; name=\"model\"\r\n\r\n"
		post := func(body string) *http.Response {
			resp, err := http.Post(p.url("/v1/audio/transcriptions"), "multipart/form-data; boundary=b", strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(resp.Body.Close)
			return resp
		}

		By("a delimiter mid-line in the preamble is text: the backend's model is the one routed")
		resp := post("preamble --b\r\n" + model + "cheap\r\n--b\r\n\r\njunk\r\n--b\r\n" + model + "expensive\r\n--b--\r\n")
		Expect(resp.StatusCode).To(Equal(200))
		Expect(cloud.last().model).To(Equal("expensive"))
		Eventually(p.requestLogs).Should(ContainElement(HaveKeyWithValue("model", "expensive")))

		By("a part without headers does not hide the next part's: a duplicated model is refused")
		before := len(cloud.requests())
		resp = post("--b\r\n\r\njunk\r\n--b\r\n" + model + "expensive\r\n--b\r\n" + model + "cheap\r\n--b--\r\n")
		Expect(resp.StatusCode).To(Equal(400))
		Expect(len(cloud.requests())).To(Equal(before))

		By("what mime/multipart refuses, the proxy refuses with invalid_form")
		resp = post("--b\r\n" + model + "m\r\n--b\tjunk\r\n\r\nx\r\n--b--\r\n")
		Expect(resp.StatusCode).To(Equal(400))
		body, _ := io.ReadAll(resp.Body)
		Expect(string(body)).To(ContainSubstring(`"code":"invalid_form"`))
		Expect(len(cloud.requests())).To(Equal(before))

		By("a well-formed form passes byte for byte")
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("file", "a.wav")
		_, _ = fw.Write([]byte("RIFF\r\n--" + mw.Boundary() + "X\r\n"))
		_ = mw.WriteField("model", "whisper-1")
		_ = mw.Close()
		resp, err := http.Post(p.url("/v1/audio/transcriptions"), mw.FormDataContentType(), bytes.NewReader(buf.Bytes()))
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(200))
		Expect(cloud.last().body).To(Equal(buf.String()))
		Expect(cloud.last().model).To(Equal("whisper-1"))
	})

	It("sends a rotated credentials Secret without a restart, while a stream on the old key continues [R32]", func() {
		cloud := newFakeOpenAI("cloud", upstreamOK)
		newSecret(ns, "cloud-key", map[string]string{"API_KEY": "sk-old", "UNRELATED": "not projected"})
		p := oneBackend(externalAt("cloud", "openai-compatible", cloud.URL+"/v1", "cloud-key"), "--credentials-refresh=200ms")
		c := openaiClient(p, "")
		d := deployment(ns, "r-router-proxy")
		Expect(d.Spec.Template.Spec.Containers[0].EnvFrom).To(BeEmpty())

		By("a stream opens on the old key")
		release := cloud.holdStreams()
		stream := c.Chat.Completions.NewStreaming(suiteCtx, chatParams("m"))
		Expect(stream.Next()).To(BeTrue(), "chunk 1: %v", stream.Err())
		Expect(cloud.last().header.Get("Authorization")).To(Equal("Bearer sk-old"))

		By("the Secret rotates on the API server; the kubelet updates the mounted volume")
		s := &corev1.Secret{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "cloud-key"}, s)).To(Succeed())
		s.Data["API_KEY"] = []byte("sk-new")
		Expect(k8sClient.Update(suiteCtx, s)).To(Succeed())
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "cloud-key"}, s)).To(Succeed())
		p.remount("credentials", map[string]string{"cloud/API_KEY": string(s.Data["API_KEY"])})
		Eventually(func(g Gomega) {
			_, err := c.Chat.Completions.New(suiteCtx, chatParams("m"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cloud.last().header.Get("Authorization")).To(Equal("Bearer sk-new"))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		_, err := os.Stat(filepath.Join(p.volumes["credentials"], "cloud", "UNRELATED"))
		Expect(os.IsNotExist(err)).To(BeTrue(), "only the keys the proxy reads are in the pod")

		By("the stream that started on the old key finishes")
		close(release)
		for stream.Next() {
		}
		Expect(stream.Err()).NotTo(HaveOccurred())
		Expect(deployment(ns, "r-router-proxy").Generation).To(Equal(d.Generation), "the rotation rolled the proxy pods")
	})
})
