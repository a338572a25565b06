/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Proves R29: an answer streamed without SSE (speech audio: chunked, no Content-Length) reaches
// the client as the backend sends it, not when it ends.
func TestStreamedAudioIsFlushed(t *testing.T) {
	release := make(chan struct{})
	tts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write([]byte("ID3-first-frame"))
		w.(http.Flusher).Flush()
		<-release
		_, _ = w.Write([]byte("-rest"))
	}))
	defer tts.Close()
	defer close(release) // before the servers close: they wait for their handlers
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "tts", Kind: routingv1.KindExternal, URL: tts.URL + "/v1"}},
		DefaultRoute: "tts",
	}, nil)
	front := httptest.NewServer(p)
	defer front.Close()

	got := make(chan string, 1)
	go func() {
		resp, err := http.Post(front.URL+"/v1/audio/speech", "application/json", strings.NewReader(`{"model":"tts-1","input":"hi","voice":"alloy"}`))
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		buf := make([]byte, 64)
		n, _ := io.ReadAtLeast(resp.Body, buf, len("ID3-first-frame"))
		got <- string(buf[:n])
	}()
	select {
	case first := <-got:
		if first != "ID3-first-frame" {
			t.Fatalf("first bytes %q", first)
		}
	case <-time.After(time.Second): // the proxy waits 2 s for the whole answer
		t.Fatal("the first audio bytes did not reach the client while the backend held the rest")
	}
}
