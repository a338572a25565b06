/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// routerClient is the official OpenAI client on the router's Service, reached by `kubectl
// port-forward` as a user reaches it; stop ends the forward.
func (s *suite) routerClient(t *testing.T) (c openai.Client, stop func()) {
	port, stop := s.portForward(t, "default", "svc/router-router-proxy", "8080")
	return openai.NewClient(option.WithBaseURL("http://127.0.0.1:"+port+"/v1"), option.WithAPIKey("unused")), stop
}

// streamed is what one stream delivered: the text, the chunks that carried text, how it ended
// and when.
type streamed struct {
	content string
	chunks  int
	err     error
	ended   time.Time
}

// openStream starts a streamed chat completion of at most maxTokens tokens and returns once its
// first chunk has arrived, so the request is in flight at the model server; the channel gets
// the whole stream when it ends. Every stream ends within two minutes.
func openStream(t *testing.T, c openai.Client, model string, maxTokens int64) <-chan streamed {
	t.Helper()
	first := make(chan struct{})
	done := make(chan streamed, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:     model,
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a long story, slowly.")},
			MaxTokens: openai.Int(maxTokens),
		})
		var r streamed
		for stream.Next() {
			if ch := stream.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				r.content += ch.Choices[0].Delta.Content
				if r.chunks++; r.chunks == 1 {
					close(first)
				}
			}
		}
		r.err, r.ended = stream.Err(), time.Now()
		if r.chunks == 0 {
			close(first)
		}
		done <- r
	}()
	select {
	case <-first:
	case <-time.After(time.Minute):
		t.Fatalf("no chunk of a %s stream within a minute", model)
	}
	return done
}
