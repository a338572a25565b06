/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// upstream is the fake OpenAI-compatible API every mode talks to, in the benchmark's process.
type upstream struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	hold chan struct{} // streams wait here after their first chunk, when not nil
	// arrivals counts the requests whose body the upstream has read.
	arrivals atomic.Int64
}

// countArrivals is a counter of the requests that arrive from now on.
func (u *upstream) countArrivals() func() int64 {
	start := u.arrivals.Load()
	return func() int64 { return u.arrivals.Load() - start }
}

const completion = `{"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":"bench-model","choices":[{"index":0,"message":{"role":"assistant","content":"The quick brown fox jumps over the lazy dog."},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":10,"total_tokens":22}}`

const chunk = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"bench-model","choices":[{"index":0,"delta":{"content":"token "},"finish_reason":null}]}` + "\n\n"

func startUpstream() (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{url: "http://" + ln.Addr().String()}
	u.srv = &http.Server{Handler: u}
	go func() { _ = u.srv.Serve(ln) }()
	return u, nil
}

func (u *upstream) close() { _ = u.srv.Close() }

// holdStreams makes streams wait after their first chunk, and non-streaming requests before their
// answer, until the returned function is called.
func (u *upstream) holdStreams() (release func()) {
	ch := make(chan struct{})
	u.mu.Lock()
	u.hold = ch
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		u.hold = nil
		u.mu.Unlock()
		close(ch)
	}
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.arrivals.Add(1)
	var req struct {
		Stream bool `json:"stream"`
		// Flood asks for a stream as long as it can be written (a client that stops reading;
		// hostile.go).
		Flood bool `json:"bench_flood"`
	}
	_ = json.Unmarshal(body, &req)
	if req.Flood {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for sent := 0; sent < 1<<30 && r.Context().Err() == nil; sent += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			_ = rc.Flush()
		}
		return
	}
	if !req.Stream {
		u.mu.Lock()
		hold := u.hold
		u.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, completion)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	_, _ = io.WriteString(w, chunk)
	_ = rc.Flush()
	u.mu.Lock()
	hold := u.hold
	u.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	for range 4 {
		_, _ = io.WriteString(w, chunk)
		_ = rc.Flush()
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}
