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
	"sync"
	"testing"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// A request's prompt counts against its pod from the send until the first byte of the streamed
// answer (its first token), not until the stream ends: the pod's prefill is what the next
// request would queue behind, its decode is not.
// Proves E7.
func TestPromptWorkCountsAgainstThePodUntilItsFirstByte(t *testing.T) {
	firstToken, end := make(chan struct{}), make(chan struct{})
	pod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // headers before the prefill, as vLLM sends them
		<-firstToken
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-end
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(pod.Close)
	var once1, once2 sync.Once
	release := func(o *sync.Once, c chan struct{}) func() { return func() { o.Do(func() { close(c) }) } }
	t.Cleanup(release(&once1, firstToken)) // a failed test still lets the pod's handler end
	t.Cleanup(release(&once2, end))
	doc := &routingv1.Document{Balancing: routingv1.BalancingEngineAware, DefaultRoute: "llama",
		Engine: &routingv1.EngineScoring{Interval: "100ms", Timeout: "80ms", StaleAfter: "300ms", MaxBodyBytes: 1 << 20,
			Weights: routingv1.EngineWeights{Queue: 3, KVCache: 1, InFlight: 1, Prefix: 2}, KVCacheFullPercent: 90, LongPromptBlocks: 64},
		Backends: []routingv1.Backend{{Name: "llama", Kind: routingv1.KindInferenceService, URL: pod.URL,
			Service: &routingv1.Service{Namespace: "ns", Name: "llama", Port: "http"}}}}
	b := NewBalancer(doc, BalancerOptions{PrefixBlockBytes: 16})
	p, _ := newProxy(t, *doc, func(o *Options) { o.Balancer = b; o.MaxBodyBytes = 1 << 20; o.RequestTimeout = 10 * time.Second })
	pool := b.state.Load().pools["llama"]
	pool.Update([]string{strings.TrimPrefix(pod.URL, "http://")})
	ep := pool.Endpoints()[0]

	prompt := strings.Repeat("Summarise this report. ", 40) // 920 bytes: 57 blocks of 16
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		done <- do(p, http.MethodPost, "/v1/chat/completions", `{"model":"llama","stream":true,"messages":[{"role":"user","content":"`+prompt+`"}]}`, nil)
	}()
	waitFor(t, func() bool {
		select {
		case w := <-done:
			t.Fatalf("answered before the first token: %d %s", w.Code, w.Body.String())
		default:
		}
		return ep.Prefilling() > 0
	}, "the pod's pending prompt work while it prefills")
	if got := ep.Prefilling(); got != 57 {
		t.Errorf("pending prompt work %d blocks, want the prompt's 57 (none was sent the pod before)", got)
	}
	release(&once1, firstToken)()
	waitFor(t, func() bool { return ep.Prefilling() == 0 }, "the prompt work to end at the first token")
	if ep.Outstanding() != 1 {
		t.Errorf("in flight %d after the first token, want 1: the stream is still open", ep.Outstanding())
	}
	release(&once2, end)()
	if w := <-done; w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body.String())
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
