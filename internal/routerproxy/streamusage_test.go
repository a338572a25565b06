/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

const (
	chunkHi    = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}` + "\n\n"
	chunkThere = `data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}` + "\n\n"
	chunkUsage = `data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}` + "\n\n"
	chunkDone  = "data: [DONE]\n\n"
)

// sseUpstream answers a chat stream as a strict server does: 400 to a body with stream_options
// when strict, the usage-only chunk when asked for, a Content-Length when sized, gzip when gzips
// (whatever it was asked). It records the last request.
type sseUpstream struct {
	*httptest.Server
	strict, sized, gzips bool
	body                 atomic.Pointer[string]
	acceptEncoding       atomic.Pointer[string]
}

func newSSEUpstream(t *testing.T, configure func(*sseUpstream)) *sseUpstream {
	u := &sseUpstream{}
	configure(u)
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body, ae := string(b), r.Header.Get("Accept-Encoding")
		u.body.Store(&body)
		u.acceptEncoding.Store(&ae)
		if u.strict && strings.Contains(body, "stream_options") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`)
			return
		}
		out := chunkHi + chunkThere
		if strings.Contains(body, `"include_usage":true`) {
			out += chunkUsage
		}
		out += chunkDone
		w.Header().Set("Content-Type", "text/event-stream")
		if u.gzips {
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
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *sseUpstream) lastBody() string { return *u.body.Load() }

// streamProxy serves a proxy of one backend at u, over real HTTP (Content-Length and chunking
// are the server's).
func streamProxy(t *testing.T, u *sseUpstream, streamUsage bool) (*httptest.Server, *Proxy, *prometheus.Registry) {
	p, reg := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "b", Kind: routingv1.KindExternal, URL: u.URL + "/v1", StreamUsage: streamUsage}},
		DefaultRoute: "b",
	}, nil)
	s := httptest.NewServer(p)
	t.Cleanup(s.Close)
	return s, p, reg
}

// chat posts body to the proxy as a client that asks for gzip, and returns the status and the
// body as the client reads it (an error reading it fails the test).
func chat(t *testing.T, s *httptest.Server, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip, deflate") // the OpenAI Node SDK's; set by hand, so Go does not decompress
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v (got %q)", err, got)
	}
	return resp.StatusCode, resp.Header, string(got)
}

// recorded is c's value once it is want, or after 5 s whatever it is then: the proxy records an
// answer's tokens when the answer ends, which can be just after the client read its last byte.
func recorded(c prometheus.Collector, want float64) float64 {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := testutil.ToFloat64(c)
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Proves R21.
func TestStreamUsageIsAskedOnlyWhereTheDocumentSays(t *testing.T) {
	strict := newSSEUpstream(t, func(u *sseUpstream) { u.strict = true })
	s, p, reg := streamProxy(t, strict, false)
	code, _, got := chat(t, s, `{"model":"m","stream":true,"messages":[]}`)
	if code != http.StatusOK || got != chunkHi+chunkThere+chunkDone {
		t.Fatalf("a backend not known to accept stream_options: %d %q", code, got)
	}
	if strings.Contains(strict.lastBody(), "stream_options") {
		t.Fatalf("sent %s", strict.lastBody())
	}
	if n := recorded(p.metrics.estimated.WithLabelValues("b", "other"), 2); n != 2 {
		t.Errorf("estimated output tokens %v, want 2 (two chunks with text)", n)
	}
	if n := testutil.CollectAndCount(reg, "llmkube_router_tokens_total"); n != 0 {
		t.Errorf("an estimate counted as reported usage: %d series", n)
	}

	accepts := newSSEUpstream(t, func(*sseUpstream) {})
	s, p, reg = streamProxy(t, accepts, true)
	code, _, got = chat(t, s, `{"model":"m","stream":true,"messages":[]}`)
	if code != http.StatusOK || got != chunkHi+chunkThere+chunkDone || !strings.Contains(accepts.lastBody(), `"include_usage":true`) {
		t.Fatalf("a backend that accepts it: %d %q, sent %s", code, got, accepts.lastBody())
	}
	if n := recorded(p.metrics.tokens.WithLabelValues("b", "other", "output", noClient), 2); n != 2 {
		t.Errorf("reported output tokens %v, want 2", n)
	}

	body := `{"model":"m","stream":true,"stream_options":{"include_usage":false},"messages":[]}`
	_, _, got = chat(t, s, body)
	if sent := accepts.lastBody(); sent != body || got != chunkHi+chunkThere+chunkDone {
		t.Errorf("a client's include_usage false: sent %s, client got %q", sent, got)
	}
	_, _, got = chat(t, s, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`)
	if got != chunkHi+chunkThere+chunkUsage+chunkDone {
		t.Errorf("a client that asked for usage: %q", got)
	}
}

// Proves R22.
func TestHiddenUsageChunkDropsTheUpstreamContentLength(t *testing.T) {
	sized := newSSEUpstream(t, func(u *sseUpstream) { u.sized = true })
	s, _, _ := streamProxy(t, sized, true)
	code, h, got := chat(t, s, `{"model":"m","stream":true,"messages":[]}`)
	if code != http.StatusOK || got != chunkHi+chunkThere+chunkDone {
		t.Fatalf("%d %q", code, got)
	}
	if cl := h.Get("Content-Length"); cl != "" {
		t.Errorf("Content-Length %s on an answer the proxy shortened", cl)
	}
}

// Proves R22.
func TestUpstreamsAreAskedForIdentityAndACompressedAnswerPassesUnread(t *testing.T) {
	plain := newSSEUpstream(t, func(*sseUpstream) {})
	s, p, reg := streamProxy(t, plain, true)
	chat(t, s, `{"model":"m","stream":true,"messages":[]}`)
	if ae := *plain.acceptEncoding.Load(); ae != "identity" {
		t.Errorf("the upstream was asked for Accept-Encoding %q", ae)
	}
	if n := recorded(p.metrics.tokens.WithLabelValues("b", "other", "input", noClient), 4); n != 4 {
		t.Errorf("input tokens %v, want 4", n)
	}

	gz := newSSEUpstream(t, func(u *sseUpstream) { u.gzips, u.sized = true, true })
	s, p, reg = streamProxy(t, gz, true)
	code, h, got := chat(t, s, `{"model":"m","stream":true,"messages":[]}`)
	if code != http.StatusOK || h.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%d %v", code, h)
	}
	zr, err := gzip.NewReader(strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	plainText, err := io.ReadAll(zr)
	if err != nil || string(plainText) != chunkHi+chunkThere+chunkUsage+chunkDone {
		t.Fatalf("the compressed answer changed on the way: %q %v", plainText, err)
	}
	if n := testutil.CollectAndCount(reg, "llmkube_router_tokens_total", "llmkube_router_estimated_output_tokens_total"); n != 0 {
		t.Errorf("counted %d series from bytes it cannot read", n)
	}
}

// Proves R23.
func TestMeterFindsTheFirstTokenWhateverTheSpacing(t *testing.T) {
	for name, stream := range map[string]string{
		"spaced":     "data: {\"choices\": [{\"delta\": {\"role\": \"assistant\", \"content\": \"\"}}]}\n\ndata: {\"choices\": [{\"delta\": {\"content\" :\t\"Hi\"}}]}\n\n",
		"tool calls": `data: {"choices":[{"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}` + "\n\n" + `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}` + "\n\n",
		"reasoning":  `data: {"choices":[{"delta":{"reasoning":"hmm"}}]}` + "\n\n",
	} {
		for _, split := range []int{1, 7, len(stream)} {
			m := &meter{stream: true}
			var chunks []string
			for i := 0; i < len(stream); i += split {
				chunks = append(chunks, stream[i:min(i+split, len(stream))])
			}
			meterRun(m, chunks...)
			if m.firstToken.IsZero() || m.chunks != 1 {
				t.Errorf("%s, read %d bytes at a time: first token %v, %d chunks with text", name, split, m.firstToken, m.chunks)
			}
		}
	}
	m := &meter{stream: true}
	meterRun(m, `data: {"choices":[{"delta":{"content": null, "tool_calls":[{"function":{"name":"f","arguments":""}}]}}]}`+"\n\n")
	if !m.firstToken.IsZero() {
		t.Error("a null content and empty arguments are no token")
	}
}
