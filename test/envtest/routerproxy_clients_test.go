/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
)

// sink is an upstream for hostile and heavy clients: its chat streams send 16 KiB chunks as fast
// as they are taken (endless unless the request sets "n", the chunks to send), and its
// transcriptions read the whole upload, take `work` to transcribe, and record the size.
type sink struct {
	*httptest.Server
	work     time.Duration
	canceled atomic.Int32 // streams whose request the proxy canceled
	mu       sync.Mutex
	uploads  []int64
}

var sinkChunk = `data: {"id":"s","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 16<<10) + `"},"finish_reason":null}]}` + "\n\n"

func newSink() *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	DeferCleanup(func() { s.CloseClientConnections(); s.Close() })
	return s
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/audio/transcriptions" {
		n, _ := io.Copy(io.Discard, r.Body)
		time.Sleep(s.work)
		s.mu.Lock()
		s.uploads = append(s.uploads, n)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"text":"ok"}`)
		return
	}
	var req struct {
		N int `json:"n"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for i := 0; req.N == 0 || i < req.N; i++ {
		if _, err := io.WriteString(w, sinkChunk); err != nil || rc.Flush() != nil {
			if r.Context().Err() != nil {
				s.canceled.Add(1)
			}
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

func (s *sink) uploaded() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.uploads...)
}

// sinkRouter runs the operator and a router whose every model goes to a sink.
func sinkRouter() (string, *sink) {
	ns := newNamespace()
	startOperator(ns, controllers.Config{})
	s := newSink()
	newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Backends = []inferencev1alpha1.Backend{externalAt("sink", "openai-compatible", s.URL+"/v1", "")}
		r.Spec.DefaultRoute = ptr.To("sink")
	})
	routerReady(ns, "r", "sink")
	return ns, s
}

// peakRSS samples the resident memory of pid every 10 ms until stop is closed.
func peakRSS(pid int, stop chan struct{}) func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if r := rssOf(pid); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { <-done; return peak.Load() }
}

var _ = Describe("Router proxy against clients that stall or send too much", func() {
	It("ends a stream whose client stopped reading within the idle limit, releasing its count, while a slow reader gets every byte [R24]", func() {
		ns, s := sinkRouter()
		p := runProxyAsDeployed(ns, "r-router-proxy", "--stream-idle-timeout=2s")
		inFlight := func() float64 { return p.metric(`llmkube_router_in_flight_requests{backend="sink"}`) }
		stream := func(n int) *http.Response {
			resp, err := http.Post(p.url("/v1/chat/completions"), "application/json",
				strings.NewReader(fmt.Sprintf(`{"model":"m","stream":true,"n":%d,"messages":[{"role":"user","content":"hi"}]}`, n)))
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.StatusCode).To(Equal(200))
			return resp
		}

		By("a client reads the first kilobyte of an endless stream, then stops reading and keeps its connection")
		stalled := stream(0)
		DeferCleanup(stalled.Body.Close)
		_, err := io.ReadFull(stalled.Body, make([]byte, 1<<10))
		Expect(err).NotTo(HaveOccurred())
		Expect(inFlight()).To(Equal(1.0))
		Eventually(inFlight, 20*time.Second, 100*time.Millisecond).Should(Equal(0.0), "the stalled client still holds a request in flight")
		Eventually(s.canceled.Load).Should(Equal(int32(1)), "the upstream request was not canceled")
		Expect(p.metric(`llmkube_router_client_timeouts_total{phase="response"}`)).To(Equal(1.0))
		Eventually(p.requestLogs).Should(ContainElement(And(HaveKeyWithValue("status", 499.0),
			HaveKeyWithValue("error", ContainSubstring("client stopped reading")))))

		By("a client that reads 64 KiB every 50 ms gets all of a 16 MiB stream, for many times the idle limit")
		start := time.Now()
		slow := stream(1024)
		defer slow.Body.Close()
		var got int64
		buf := make([]byte, 64<<10)
		var last []byte
		for {
			n, err := io.ReadFull(slow.Body, buf)
			got += int64(n)
			if n > 0 {
				last = append(last[:0], buf[max(0, n-32):n]...)
			}
			if err != nil {
				Expect(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)).To(BeTrue(), "%v", err)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		Expect(got).To(Equal(int64(1024*len(sinkChunk) + len("data: [DONE]\n\n"))))
		Expect(string(last)).To(HaveSuffix("data: [DONE]\n\n"))
		Expect(time.Since(start)).To(BeNumerically(">", 5*time.Second), "the slow reader was not slow: the idle limit was not exercised")
		Expect(p.metric(`llmkube_router_client_timeouts_total{phase="response"}`)).To(Equal(1.0))
		Eventually(inFlight).Should(Equal(0.0))
	})

	It("answers 408 to bodies that stall mid-way and closes their connections, so the proxy's goroutines return to their baseline [R25]", func() {
		ns, _ := sinkRouter()
		p := runProxyAsDeployed(ns, "r-router-proxy", "--body-read-timeout=2s")
		baseline := p.metric("go_goroutines")
		const clients = 200
		By(fmt.Sprintf("%d clients send a kilobyte of their body (half chunked, half of a declared 64 KiB) and stall", clients))
		type result struct {
			status int
			code   string
			close  bool
			eof    error
		}
		results := make(chan result, clients)
		prefix := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 1000)
		for i := range clients {
			conn, err := net.Dial("tcp", p.addr)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(conn.Close)
			if i%2 == 0 {
				fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(prefix), prefix)
			} else {
				fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", 64<<10, prefix)
			}
			go func() {
				defer GinkgoRecover()
				_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
				br := bufio.NewReader(conn)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					results <- result{eof: err}
					return
				}
				var e struct {
					Error struct {
						Code string `json:"code"`
					} `json:"error"`
				}
				_ = json.NewDecoder(resp.Body).Decode(&e)
				_, err = br.ReadByte() // the connection must be closed after the answer
				results <- result{status: resp.StatusCode, code: e.Error.Code, close: resp.Close, eof: err}
			}()
		}
		for range clients {
			var r result
			Eventually(results, 30*time.Second).Should(Receive(&r))
			Expect(r.status).To(Equal(http.StatusRequestTimeout), "no answer: %v", r.eof)
			Expect(r.code).To(Equal("request_timeout"))
			Expect(r.close).To(BeTrue(), "Connection: close")
			Expect(r.eof).To(MatchError(io.EOF), "the proxy kept the connection open")
		}
		Expect(p.metric(`llmkube_router_client_timeouts_total{phase="body"}`)).To(Equal(float64(clients)))
		Eventually(func() float64 { return p.metric("go_goroutines") }, 10*time.Second).Should(BeNumerically("<=", baseline+10),
			"goroutines at baseline %v", baseline)
		Expect(p.metric("llmkube_router_body_bytes_in_flight")).To(Equal(0.0))
	})

	It("grows a body's buffer with the bytes that arrived, to the length a client declared only once a quarter of it arrived [R26]", func() {
		ns, _ := sinkRouter()
		// A budget large enough to admit every declared length: what is measured is the buffers.
		p := runProxyAsDeployed(ns, "r-router-proxy", fmt.Sprintf("--body-memory-budget=%d", 1<<30))
		heap := func() float64 { return p.metric("go_memstats_heap_inuse_bytes") }
		before := heap()
		By("10 clients declare 32 MiB bodies, send 1 MiB each (10 MiB in all) and stall")
		chunk := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 1<<20))
		for range 10 {
			conn, err := net.Dial("tcp", p.addr)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(conn.Close)
			fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 32<<20)
			_, err = conn.Write(chunk)
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(func() float64 { return p.metric("llmkube_router_body_bytes_in_flight") }).Should(Equal(float64(10 * (32<<20 + 1))))
		time.Sleep(2 * time.Second) // the proxy reads what was sent
		grown := heap() - before
		Expect(grown).To(BeNumerically("<", 48<<20), "heap in use grew by %.0f MiB for 10 MiB received", grown/(1<<20))
		GinkgoWriter.Printf("heap in use grew by %.1f MiB for 10 MiB received\n", grown/(1<<20))
	})

	It("admits bodies against a budget derived from the memory limit: 10 concurrent 25 MB uploads in a 256Mi pod get 503 with Retry-After beyond it, never an OOM kill, and all pass with the SDK's retries [R27]", func() {
		ns, s := sinkRouter()
		s.work = 500 * time.Millisecond
		c := deployment(ns, "r-router-proxy").Spec.Template.Spec.Containers[0]
		limit := c.Resources.Limits[corev1.ResourceMemory]
		Expect(limit.String()).To(Equal("256Mi"))
		p := runProxyAsDeployed(ns, "r-router-proxy")
		goMemLimit := limit.Value() / 10 * 9
		Expect(p.metric("llmkube_router_body_budget_bytes")).To(Equal(float64((goMemLimit - 40<<20) / 2)))

		audio := bytes.Repeat([]byte("RIFF-wav-"), 25_000_000/9+1)[:25_000_000]
		upload := func(retries int) (*openai.AudioTranscriptionNewResponseUnion, error) {
			cl := openaiClient(p, "", option.WithMaxRetries(retries), option.WithRequestTimeout(2*time.Minute))
			return cl.Audio.Transcriptions.New(suiteCtx, openai.AudioTranscriptionNewParams{
				File: openai.File(bytes.NewReader(audio), "speech.wav", "audio/wav"), Model: openai.AudioModelWhisper1,
			})
		}
		round := func(retries int) (ok, refused int, peak uint64) {
			stop := make(chan struct{})
			peakOf := peakRSS(p.cmd.Process.Pid, stop)
			var wg sync.WaitGroup
			var mu sync.Mutex
			for range 10 {
				wg.Add(1)
				go func() {
					defer GinkgoRecover()
					defer wg.Done()
					t, err := upload(retries)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						Expect(t.Text).To(Equal("ok"))
						ok++
						return
					}
					e := apiError(err)
					Expect(e.StatusCode).To(Equal(http.StatusServiceUnavailable), "%v", err)
					Expect(e.Code).To(Equal("server_overloaded"))
					Expect(e.Type).To(Equal("server_error"))
					Expect(e.Response.Header.Get("Retry-After")).To(Equal("2"))
					refused++
				}()
			}
			wg.Wait()
			close(stop)
			return ok, refused, peakOf()
		}

		By("10 concurrent 25 MB uploads, no retries: those beyond the budget get 503 before their body is read")
		ok, refused, peak := round(0)
		GinkgoWriter.Printf("no retries: %d answered, %d refused, peak RSS %d MiB\n", ok, refused, peak>>20)
		Expect(peak).To(BeNumerically("<", uint64(limit.Value())), "peak RSS %d MiB in a 256Mi pod", peak>>20)
		Expect(ok).To(BeNumerically(">=", 1))
		Expect(refused).To(BeNumerically(">=", 1), "no upload was refused")
		Expect(p.metric("llmkube_router_body_budget_refusals_total")).To(Equal(float64(refused)))

		By("the same with the SDK's retries, which wait for Retry-After: every upload is transcribed")
		ok, refused, peak = round(10)
		GinkgoWriter.Printf("with retries: %d answered, %d refused, peak RSS %d MiB\n", ok, refused, peak>>20)
		Expect(ok).To(Equal(10))
		Expect(peak).To(BeNumerically("<", uint64(limit.Value())), "peak RSS %d MiB in a 256Mi pod", peak>>20)
		for _, n := range s.uploaded() {
			Expect(n).To(BeNumerically(">", len(audio)), "an upload was cut")
		}
		Expect(p.metric("llmkube_router_body_bytes_in_flight")).To(Equal(0.0))
	})
})
