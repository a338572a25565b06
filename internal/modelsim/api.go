/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelsim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"time"
)

// The request fields the simulator reads; every other field is accepted and ignored, as vLLM does.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
}

type completionRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens int `json:"max_tokens"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "messages must not be empty")
		return
	}
	var texts []string
	for _, m := range req.Messages {
		texts = append(texts, string(m.Content))
	}
	limit := req.MaxCompletionTokens
	if limit == 0 {
		limit = req.MaxTokens
	}
	include := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.generate(w, r, generation{
		object: "chat.completion", prefix: "chatcmpl", stream: req.Stream, includeUsage: include,
		prompt: promptTokens(texts...), maxTokens: limit,
		choice: func(text string, final bool) map[string]any {
			if req.Stream {
				delta := map[string]any{"content": text}
				if final {
					delta = map[string]any{}
				}
				return map[string]any{"index": 0, "delta": delta, "finish_reason": finish(final)}
			}
			return map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}
		},
	})
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	include := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.generate(w, r, generation{
		object: "text_completion", prefix: "cmpl", stream: req.Stream, includeUsage: include,
		prompt: promptTokens(string(req.Prompt)), maxTokens: req.MaxTokens,
		choice: func(text string, final bool) map[string]any {
			return map[string]any{"index": 0, "text": text, "finish_reason": finish(final || !req.Stream)}
		},
	})
}

func finish(final bool) any {
	if final {
		return "stop"
	}
	return nil
}

// generation is one answer of either endpoint: how its chunks look, and whether it streams.
type generation struct {
	object, prefix string
	stream         bool
	includeUsage   bool
	prompt         int
	maxTokens      int
	// choice is the choice object of a chunk (text, not final), of the final chunk (final) or of
	// the whole answer when not streaming.
	choice func(text string, final bool) map[string]any
}

// generate holds a running slot while it paces the reply's tokens out, as a chunk each when
// streaming (server-sent events, as OpenAI and vLLM send them), else as one answer at the end.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, g generation) {
	release, ok := s.admit(r)
	if !ok {
		return
	}
	defer release()
	s.cPrompt.Add(float64(g.prompt))
	toks := s.tokens(g.maxTokens)
	base := map[string]any{"id": id(g.prefix), "created": time.Now().Unix(), "model": s.cfg.Model}
	obj := func(fields map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range fields {
			out[k] = v
		}
		return out
	}
	u := usage{PromptTokens: g.prompt, CompletionTokens: len(toks), TotalTokens: g.prompt + len(toks)}
	if !g.stream {
		for range toks {
			if !s.pace(r) {
				return
			}
			s.cGen.Inc()
		}
		writeJSON(w, http.StatusOK, obj(map[string]any{
			"object": g.object, "choices": []any{g.choice(strings.Join(toks, ""), true)}, "usage": u,
		}))
		return
	}
	chunkObject := g.object
	if g.object == "chat.completion" {
		chunkObject = "chat.completion.chunk"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for _, t := range toks {
		if !s.pace(r) {
			return
		}
		s.cGen.Inc()
		if !send(obj(map[string]any{"object": chunkObject, "choices": []any{g.choice(t, false)}})) {
			return
		}
	}
	if !send(obj(map[string]any{"object": chunkObject, "choices": []any{g.choice("", true)}})) {
		return
	}
	if g.includeUsage {
		if !send(obj(map[string]any{"object": chunkObject, "choices": []any{}, "usage": u})) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// embeddings answers each input with a unit vector derived from its text, so equal inputs get
// equal vectors and a test can tell inputs apart.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(req.Input, &one); err == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil {
		writeError(w, http.StatusBadRequest, "input must be a string or an array of strings")
		return
	}
	data := make([]any, 0, len(inputs))
	for i, in := range inputs {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vector(in, s.cfg.Dimensions)})
	}
	n := promptTokens(inputs...)
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "model": s.cfg.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": n, "total_tokens": n},
	})
}

func vector(text string, dims int) []float64 {
	v := make([]float64, dims)
	var norm float64
	for i := range v {
		h := fnv.New64a()
		_, _ = fmt.Fprintf(h, "%d:%s", i, text)
		v[i] = float64(h.Sum64()%2000)/1000 - 1
		norm += v[i] * v[i]
	}
	norm = math.Sqrt(norm)
	for i := range v {
		if norm > 0 {
			v[i] /= norm
		}
	}
	return v
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": s.cfg.Model, "object": "model", "created": 0, "owned_by": "llmkube-model-simulator"},
	}})
}
