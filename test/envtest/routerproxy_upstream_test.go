/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
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
	query  string
	header http.Header
	model  string
	body   string
	file   []byte // the file part of a multipart form
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
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(body, &req)
	rec := &recorded{path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), model: req.Model, body: string(body)}
	if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(32 << 20)
		if err == nil {
			rec.model = form.Value["model"][0]
			if fh := form.File["file"]; len(fh) > 0 {
				fr, _ := fh[0].Open()
				rec.file, _ = io.ReadAll(fr)
			}
		}
	}
	f.mu.Lock()
	f.got = append(f.got, rec)
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
			f.stream(w, req.Model, req.StreamOptions.IncludeUsage)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hello from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}`, req.Model, f.name)
	case "/v1/embeddings":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,0.5]}],"model":%q,"usage":{"prompt_tokens":1,"total_tokens":1}}`, req.Model)
	case "/v1/responses":
		if req.Stream {
			f.responsesStream(w, req.Model)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":%q,"output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hello from %s","annotations":[]}]}],"usage":{"input_tokens":11,"input_tokens_details":{"cached_tokens":0},"output_tokens":13,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":24}}`, req.Model, f.name)
	case "/v1/audio/transcriptions", "/v1/audio/translations":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"text":"heard by %s"}`, f.name)
	case "/v1/audio/speech":
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = io.WriteString(w, "ID3-"+f.name)
	default: // images, rerank, score, tokenize, detokenize: say where the request arrived
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"backend":%q,"path":%q,"model":%q}`, f.name, r.URL.Path, req.Model)
	}
}

// responsesStream sends a Responses API stream: named events, the usage in the last one.
func (f *fakeOpenAI) responsesStream(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	ev := func(name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
	ev("response.created", fmt.Sprintf(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":%q,"output":[],"usage":null}}`, model))
	_ = http.NewResponseController(w).Flush()
	ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel"}`)
	ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"lo"}`)
	ev("response.completed", fmt.Sprintf(`{"type":"response.completed","sequence_number":3,"response":{"id":"resp_1","object":"response","status":"completed","model":%q,"output":[],"usage":{"input_tokens":6,"output_tokens":2,"total_tokens":8}}}`, model))
}

// stream sends a chat stream of two content chunks; with includeUsage, the usage-only chunk
// before [DONE] as OpenAI does.
func (f *fakeOpenAI) stream(w http.ResponseWriter, model string, includeUsage bool) {
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
	_, _ = io.WriteString(w, chunk("lo", "stop"))
	if includeUsage {
		fmt.Fprintf(w, `data: {"id":"s1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`+"\n\n", model)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}
