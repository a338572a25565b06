/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/limits"
)

// This file is the proxy's side of the routing document's clients (docs/limits.md): which
// client a key belongs to, which models it may use, and its limits asked before a request is
// sent and settled after its answer. The decisions are the document's (controllers/modelrouter
// Clients) and the limits package's; nothing here adds anything to the upstream request.

// prepareTeams indexes rt's clients by their keys' names and gives rt its limiter: old's when the
// store did not change (its counters and connections carry on), else a new one.
//
// Note: a limiter replaced by a reload is closed only after the longest non-streaming wait, so
// that requests admitted by it can still settle.
func (p *Proxy) prepareTeams(rt *routes, old *routes) {
	doc := rt.doc
	if len(doc.Clients) > 0 {
		rt.teams = make(map[string]*routingv1.Client)
		for i := range doc.Clients {
			for _, k := range doc.Clients[i].SecretKeys {
				rt.teams[k] = &doc.Clients[i]
			}
		}
	}
	if doc.Limits == nil {
		return
	}
	if old != nil && old.limiter != nil && old.limiter.Same(doc.Limits) {
		rt.limiter = old.limiter
		return
	}
	rt.limiter = limits.New(doc.Limits, p.o.RedisPasswordFile, p.limits, p.log)
	if old != nil && old.limiter != nil {
		replaced := old.limiter
		time.AfterFunc(p.o.RequestTimeout, func() { _ = replaced.Close() })
	}
}

// identifyTeam is the client of the request's key (nil for a key no client names), and sets the
// request's client label.
func (p *Proxy) identifyTeam(rt *routes, x *exchange) *routingv1.Client {
	c := rt.teams[x.key]
	if c != nil {
		x.client = c.Name
	}
	return c
}

// mayUse refuses a model the client may not use as OpenAI refuses a project a model it has no
// access to: 403, code model_not_found.
func mayUse(c *routingv1.Client, model string) *apiError {
	if c == nil || len(c.Models) == 0 {
		return nil
	}
	for _, m := range c.Models {
		if routingv1.MatchModel(m, model) {
			return nil
		}
	}
	return invalidRequest(http.StatusForbidden, "model_not_found", "model", fmt.Sprintf("The client %q does not have access to model %q.", c.Name, model))
}

// allowedModels are the entries of list the client may use: GET /v1/models lists only those, as
// OpenAI lists a project only the models it has access to.
func allowedModels(c *routingv1.Client, list []model) []model {
	out := make([]model, 0, len(list))
	for _, m := range list {
		if mayUse(c, m.ID) == nil {
			out = append(out, m)
		}
	}
	return out
}

// admitTeam asks the client's limits and writes their headers, which every answer to the client
// carries; a refusal is 429 rate_limit_exceeded (or 503 when the store does not answer and the
// router fails closed).
func (p *Proxy) admitTeam(w http.ResponseWriter, rt *routes, c *routingv1.Client, rb requestBody, x *exchange) (*limits.Verdict, *limits.Ticket, *apiError) {
	if rt.limiter == nil || c == nil || c.Limits == nil {
		return nil, nil, nil
	}
	v, t := rt.limiter.Admit(c, reservation(rb, c.Limits))
	v.WriteHeaders(w.Header())
	switch {
	case v.Unavailable:
		return nil, nil, serverError(http.StatusServiceUnavailable, "limits_unavailable", "The router cannot check this client's limits right now (its limits store does not answer); retry shortly.")
	case !v.Allowed:
		return nil, nil, rateLimited(c.Name, v)
	}
	return &v, t, nil
}

// rateLimited is OpenAI's 429: type requests or tokens, code rate_limit_exceeded, a message that
// names the limit and when to retry.
func rateLimited(client string, v limits.Verdict) *apiError {
	name := strings.ReplaceAll(v.Refused, "_", " ")
	typ := "tokens"
	if v.Refused == limits.LimitRequestsPerMinute || v.Refused == limits.LimitConcurrentRequests {
		typ = "requests"
	}
	msg := fmt.Sprintf("Rate limit reached for client %q on %s. Please try again in %s.", client, name, v.RetryAfter.Round(time.Millisecond))
	if v.TooLarge {
		msg = fmt.Sprintf("Request too large for client %q on %s: it alone needs more tokens than the limit (prompt and max_tokens); send a smaller request.", client, name)
	}
	return &apiError{status: http.StatusTooManyRequests, message: msg, typ: typ, code: "rate_limit_exceeded"}
}

// settleTeam charges what the request used once it ended: the usage the backend reported; for a
// stream that reported none, the prompt's estimate plus the proxy's count of output tokens; for
// an error answer with neither, nothing; otherwise what was reserved.
func (p *Proxy) settleTeam(rt *routes, t *limits.Ticket, rb requestBody, x *exchange) {
	if t == nil {
		return
	}
	var used int64
	switch {
	case x.usage.ok:
		used = x.usage.input + x.usage.output
	case x.chunks > 0:
		used = promptTokens(rb) + x.chunks
	case x.status >= 400 || x.status == 0:
		used = 0
	default:
		used = t.Reserved()
	}
	rt.limiter.Settle(t, used)
}

// reservation is what a request reserves of its client's token limits before it is sent: its
// prompt's estimate and its max_tokens, or, for a request that generates text without one,
// defaultOutputTokens (at most what its tokens per minute leave beside the prompt, so that the
// default alone never makes a request too large).
//
// Note: without an output estimate, a burst of requests without max_tokens was admitted on
// their prompts alone (30 concurrent against 2000 tokens per minute used 30,300), and the client
// then owed the limit for a quarter of an hour.
func reservation(rb requestBody, l *routingv1.Limits) int64 {
	prompt, out := promptTokens(rb), max(rb.maxTokens, 0)
	if out == 0 && rb.generates {
		out = defaultOutputTokens
		if l != nil && l.TokensPerMinute > 0 {
			out = min(out, max(l.TokensPerMinute-prompt, 0))
		}
	}
	return prompt + out
}

// defaultOutputTokens is the output a request that generates text without max_tokens reserves
// (docs/limits.md): about a long chat answer, a quarter of what OpenAI's smaller chat models
// return at most (4096); its settlement charges what the backend metered.
const defaultOutputTokens = 1024

// promptTokens estimates a prompt's tokens as a quarter of its text's bytes (OpenAI's rule of
// thumb for English), counting the spans of messages, prompt, input and instructions: a form's
// audio file is not text and counts nothing.
func promptTokens(rb requestBody) int64 {
	n := (rb.messagesEnd - rb.messagesStart) + (rb.promptEnd - rb.promptStart) + (rb.inputEnd - rb.inputStart) + (rb.instructionsEnd - rb.instructionsStart)
	return int64(n / 4)
}
