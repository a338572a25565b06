/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"log/slog"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/limits"
)

// Proves L15. 30 concurrent chats without max_tokens, each of which uses 1010 tokens, against
// 2000 tokens per minute: each reserves the default output, so the admitted ones use no more than
// the limit and one request's use beyond its reservation, not 30 times it.
func TestATokenLimitHoldsWithoutMaxTokens(t *testing.T) {
	lim := limits.New(&routingv1.LimitsStore{}, "", limits.NewMetrics(prometheus.NewRegistry()), slog.New(slog.DiscardHandler))
	c := &routingv1.Client{Name: "team", Limits: &routingv1.Limits{TokensPerMinute: 2000}}
	rb, e := scanBody([]byte(`{"model":"m","messages":[{"role":"user","content":"Tell me a long story."}]}`))
	if e != nil {
		t.Fatal(e.message)
	}
	rb.generates = true
	const used = 1010
	var mu sync.Mutex
	var tickets []*limits.Ticket
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			if _, tk := lim.Admit(c, reservation(rb, c.Limits)); tk != nil {
				mu.Lock()
				tickets = append(tickets, tk)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, tk := range tickets {
		lim.Settle(tk, used)
	}
	if total := len(tickets) * used; total > 2000+used {
		t.Fatalf("30 concurrent chats without max_tokens: %d admitted, %d tokens used against 2000 per minute", len(tickets), total)
	}
	if len(tickets) == 0 {
		t.Fatal("no chat without max_tokens was admitted: the default output made it too large")
	}
	if r := reservation(rb, &routingv1.Limits{TokensPerMinute: 100}); r > 100 {
		t.Fatalf("a chat without max_tokens reserves %d of a limit of 100 tokens per minute: too large by the default alone", r)
	}
	rb.generates = false // embeddings generate no output
	if r := reservation(rb, c.Limits); r != promptTokens(rb) {
		t.Fatalf("an embedding reserves %d, want its input's %d", r, promptTokens(rb))
	}
}
