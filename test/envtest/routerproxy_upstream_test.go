/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// Behaviours of a fake upstream.
const (
	upstreamOK       = iota
	upstreamStatus   // answers with status (503, 429, ...)
	upstreamHang     // never sends headers; records when the proxy gives up
	upstreamBreakOff // sends the first stream chunk, then drops the connection
)

// fakeOpenAI is an OpenAI-compatible API on 127.0.0.1 that records what reached it. A stream's
// second chunk waits until the channel holdStreams returned is closed (or 15 s), which proves the
// proxy does not buffer.
type fakeOpenAI struct {
	*httptest.Server
	name     string
	mode     int
	status   int
	hold     atomic.Pointer[chan struct{}]
	heldOut  atomic.Bool  // a stream's second chunk went out because the hold was never released
	canceled atomic.Int32 // hanging requests whose context ended
	mu       sync.Mutex
	got      []*recorded
}

type recorded struct {
	path   string
	header http.Header
	model  string
	body   string
}

func newFakeOpenAI(name string, mode int) *fakeOpenAI {
	f := &fakeOpenAI{name: name, mode: mode, status: http.StatusServiceUnavailable}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	DeferCleanup(func() {
		f.hold.Store(nil)
		f.CloseClientConnections()
		f.Close()
	})
	return f
}

// holdStreams makes the streams that start from now on wait before their second chunk until the
// returned channel is closed.
func (f *fakeOpenAI) holdStreams() chan struct{} {
	ch := make(chan struct{})
	f.hold.Store(&ch)
	return ch
}

func (f *fakeOpenAI) requests() []*recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*recorded(nil), f.got...)
}

func (f *fakeOpenAI) last() *recorded {
	r := f.requests()
	if len(r) == 0 {
		return &recorded{header: http.Header{}}
	}
	return r[len(r)-1]
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	f.got = append(f.got, &recorded{path: r.URL.Path, header: r.Header.Clone(), model: req.Model, body: string(body)})
	f.mu.Unlock()

	switch f.mode {
	case upstreamStatus:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"error":{"message":"%s is failing","type":"server_error","param":null,"code":"overloaded"}}`, f.name)
		return
	case upstreamHang:
		<-r.Context().Done()
		f.canceled.Add(1)
		return
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		if req.Stream {
			f.stream(w, req.Model)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hello from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}`, req.Model, f.name)
	case "/v1/embeddings":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,0.5]}],"model":%q,"usage":{"prompt_tokens":1,"total_tokens":1}}`, req.Model)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeOpenAI) stream(w http.ResponseWriter, model string) {
	chunk := func(content, finish string) string {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		return fmt.Sprintf(`data: {"id":"s1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":{"role":"assistant","content":%q},"finish_reason":%s}]}`+"\n\n", model, content, fr)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, chunk("Hel", ""))
	_ = http.NewResponseController(w).Flush()
	if f.mode == upstreamBreakOff {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	if h := f.hold.Load(); h != nil {
		select {
		case <-*h:
		case <-time.After(15 * time.Second):
			f.heldOut.Store(true)
		}
	}
	_, _ = io.WriteString(w, chunk("lo", "stop")+"data: [DONE]\n\n")
}
