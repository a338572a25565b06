/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package modelsim is a model-server simulator for tests and the local cluster only: an
// OpenAI-compatible server that answers chat and text completions with a fixed text (streamed at a
// configurable token rate), embeddings with a vector derived from the input, /v1/models, /health,
// and /metrics under vLLM's metric names, so that the operator's rollout gate and the router read
// it exactly as they read vLLM. No model runs: the text says it comes from a simulator.
package modelsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config is what a simulator serves.
type Config struct {
	// Model is the name /v1/models lists and answers carry (vLLM's --model).
	Model string
	// Reply is the text of every answer, split into tokens at spaces.
	Reply string
	// TokensPerSecond paces the tokens of every answer, streamed or not: an answer of n tokens
	// takes n/TokensPerSecond seconds, so a test can hold a request in flight. 0 means no delay.
	TokensPerSecond float64
	// MaxRunning is how many requests run at once (vLLM's --max-num-seqs); the others wait and
	// count in vllm:num_requests_waiting.
	MaxRunning int
	// Dimensions is the length of every embedding vector.
	Dimensions int
}

// Server is one simulator; its handler serves the whole API.
type Server struct {
	cfg Config
	// slots holds one token per running request; vllm:kv_cache_usage_perc is its fill, as if
	// every running request took an equal share of the KV cache.
	slots chan struct{}
	reg   *prometheus.Registry

	mu               sync.Mutex
	running, waiting int
	gRunning         prometheus.Gauge
	gWaiting         prometheus.Gauge
	gKV              prometheus.Gauge
	cPrompt, cGen    prometheus.Counter
}

// New returns a simulator for cfg, with defaults for what cfg leaves zero.
func New(cfg Config) *Server {
	if cfg.Model == "" {
		cfg.Model = "simulated-model"
	}
	if cfg.Reply == "" {
		cfg.Reply = "Hello from the LLMKube model simulator: no model ran to write this answer."
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 16
	}
	if cfg.Dimensions <= 0 {
		cfg.Dimensions = 8
	}
	s := &Server{cfg: cfg, slots: make(chan struct{}, cfg.MaxRunning), reg: prometheus.NewRegistry()}
	// vLLM's names (its docs' "Production Metrics"), with its model_name label, so a scraper or the
	// rollout gate that knows vLLM reads the simulator unchanged.
	labels := prometheus.Labels{"model_name": cfg.Model}
	s.gRunning = prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:num_requests_running", Help: "Number of requests in model execution batches.", ConstLabels: labels})
	s.gWaiting = prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:num_requests_waiting", Help: "Number of requests waiting to be processed.", ConstLabels: labels})
	s.gKV = prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:kv_cache_usage_perc", Help: "KV-cache usage. 1 means 100 percent usage.", ConstLabels: labels})
	s.cPrompt = prometheus.NewCounter(prometheus.CounterOpts{Name: "vllm:prompt_tokens_total", Help: "Number of prefill tokens processed.", ConstLabels: labels})
	s.cGen = prometheus.NewCounter(prometheus.CounterOpts{Name: "vllm:generation_tokens_total", Help: "Number of generation tokens processed.", ConstLabels: labels})
	s.reg.MustRegister(s.gRunning, s.gWaiting, s.gKV, s.cPrompt, s.cGen)
	return s
}

// Handler serves the OpenAI-compatible API, /health and /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	return mux
}

// InFlight is how many requests run and wait now.
func (s *Server) InFlight() (running, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.waiting
}

// admit waits for a running slot, counting the request as waiting meanwhile; the returned
// function releases the slot.
func (s *Server) admit(r *http.Request) (func(), bool) {
	s.count(0, 1)
	select {
	case s.slots <- struct{}{}:
		s.count(1, -1)
		return func() { <-s.slots; s.count(-1, 0) }, true
	case <-r.Context().Done():
		s.count(0, -1)
		return nil, false
	}
}

func (s *Server) count(dRunning, dWaiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running += dRunning
	s.waiting += dWaiting
	s.gRunning.Set(float64(s.running))
	s.gWaiting.Set(float64(s.waiting))
	s.gKV.Set(float64(s.running) / float64(s.cfg.MaxRunning))
}

// tokens is the reply split into the pieces a stream sends: words with their leading space.
func (s *Server) tokens(maxTokens int) []string {
	words := strings.Fields(s.cfg.Reply)
	out := make([]string, 0, len(words))
	for i, w := range words {
		if maxTokens > 0 && i >= maxTokens {
			break
		}
		if i > 0 {
			w = " " + w
		}
		out = append(out, w)
	}
	return out
}

// pace waits one token's time, or returns false when the client went away.
func (s *Server) pace(r *http.Request) bool {
	if s.cfg.TokensPerSecond <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(time.Duration(float64(time.Second) / s.cfg.TokensPerSecond))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code}})
}

// promptTokens is a rough count of the prompt's tokens: its words.
func promptTokens(texts ...string) int {
	n := 0
	for _, t := range texts {
		n += len(strings.Fields(t))
	}
	return n
}

func id(prefix string) string {
	return fmt.Sprintf("%s-sim-%d", prefix, time.Now().UnixNano())
}
