/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelsim

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func client(t *testing.T, cfg Config) (*Server, openai.Client, string) {
	t.Helper()
	sim := New(cfg)
	ts := httptest.NewServer(sim.Handler())
	t.Cleanup(ts.Close)
	return sim, openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0)), ts.URL
}

// The official OpenAI client reads the simulator's answers as it reads OpenAI's: a whole answer,
// a stream of chunks that adds up to the same text, embeddings and the model list.
func TestTheOpenAIClientReadsEveryEndpoint(t *testing.T) {
	_, c, _ := client(t, Config{Model: "sim", Reply: "one two three"})
	ctx := context.Background()

	chat, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "sim", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi there")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := chat.Choices[0].Message.Content; got != "one two three" {
		t.Fatalf("chat answer = %q", got)
	}
	if chat.Usage.CompletionTokens != 3 || chat.Usage.PromptTokens == 0 {
		t.Fatalf("usage = %+v", chat.Usage)
	}

	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "sim", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "one two three" || chunks < 4 {
		t.Fatalf("stream = %q in %d chunks", got, chunks)
	}
	if acc.Usage.CompletionTokens != 3 {
		t.Fatalf("stream usage = %+v", acc.Usage)
	}

	cmpl, err := c.Completions.New(ctx, openai.CompletionNewParams{
		Model: "sim", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("say")}, MaxTokens: openai.Int(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmpl.Choices[0].Text; got != "one two" {
		t.Fatalf("completion with max_tokens 2 = %q", got)
	}

	emb, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "sim", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b", "a"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(emb.Data) != 3 || len(emb.Data[0].Embedding) != 8 {
		t.Fatalf("embeddings = %d vectors", len(emb.Data))
	}
	if emb.Data[0].Embedding[0] != emb.Data[2].Embedding[0] || emb.Data[0].Embedding[0] == emb.Data[1].Embedding[0] {
		t.Fatal("equal inputs must get equal vectors and different inputs different ones")
	}

	models, err := c.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(models.Data) != 1 || models.Data[0].ID != "sim" {
		t.Fatalf("models = %+v", models.Data)
	}
}

// While an answer is being paced out, /metrics reports it under vLLM's names, as the rollout gate
// reads vLLM; a request beyond max-num-seqs waits; when the answers are done both gauges are 0.
func TestMetricsCountRequestsInFlightUnderVLLMNames(t *testing.T) {
	sim, c, url := client(t, Config{Model: "sim", Reply: "a b c d e f g h", TokensPerSecond: 20, MaxRunning: 1})
	ctx := context.Background()
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model: "sim", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			})
			done <- err
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r, w := sim.InFlight(); r == 1 && w == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never saw one request running and one waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
	body := scrape(t, url)
	for _, want := range []string{
		`vllm:num_requests_running{model_name="sim"} 1`,
		`vllm:num_requests_waiting{model_name="sim"} 1`,
		`vllm:kv_cache_usage_perc{model_name="sim"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %q:\n%s", want, body)
		}
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	body = scrape(t, url)
	if !strings.Contains(body, `vllm:num_requests_running{model_name="sim"} 0`) || !strings.Contains(body, `vllm:num_requests_waiting{model_name="sim"} 0`) {
		t.Fatalf("metrics after the answers:\n%s", body)
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
