/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/redisserver"
)

func client(l routingv1.Limits) *routingv1.Client {
	return &routingv1.Client{Name: "team-a", SecretKeys: []string{"a"}, Limits: &l}
}

func redisFor(t *testing.T, s *redisserver.Server) *redisStore {
	st := newRedisStore(&routingv1.Redis{Address: s.Addr, Timeout: "500ms"}, "")
	t.Cleanup(func() { _ = st.close() })
	return st
}

// Both stores run the same algorithms (gcra.go and its Lua twin in redis.go): the same sequence
// of admissions and settlements gets the same verdicts from both.
func TestMemoryAndRedisAgree(t *testing.T) {
	rs := redisFor(t, redisserver.Start(t, ""))
	stores := map[string]store{"memory": newMemory(), "redis": rs}
	c := client(routingv1.Limits{RequestsPerMinute: 4, TokensPerMinute: 1000, TokensPerDay: 2500})
	now := time.Now()
	type step struct {
		reserve, used int64
		allowed       bool
		refused       string
	}
	steps := []step{
		{reserve: 100, used: 300, allowed: true},
		{reserve: 100, used: 500, allowed: true},
		{reserve: 300, allowed: false, refused: LimitTokensPerMinute}, // 800 used of 1000
		{reserve: 100, used: 100, allowed: true},
		{reserve: 10, used: 10, allowed: true},
		{reserve: 10, allowed: false, refused: LimitRequestsPerMinute}, // the fifth admission
	}
	for name, s := range stores {
		for i, st := range steps {
			tk := newTicket("test/"+name, c, st.reserve, now)
			v, err := s.admit(tk, now)
			if err != nil {
				t.Fatalf("%s step %d: %v", name, i, err)
			}
			if v.Allowed != st.allowed || v.Refused != st.refused {
				t.Fatalf("%s step %d: allowed=%v refused=%q, want allowed=%v refused=%q", name, i, v.Allowed, v.Refused, st.allowed, st.refused)
			}
			if v.Allowed {
				if err := settleNow(s, tk, st.used); err != nil {
					t.Fatalf("%s settle %d: %v", name, i, err)
				}
			} else if v.RetryAfter <= 0 || v.RetryAfter > time.Minute {
				t.Fatalf("%s step %d: retry after %v, want within a minute", name, i, v.RetryAfter)
			}
		}
	}
}

// Proves L7. A day quota renews at 00:00 UTC and a month quota on the 1st, in both stores; a request's
// settlement after midnight is charged to the day it was admitted in.
func TestQuotaRollsOverAtTheUTCDayAndMonth(t *testing.T) {
	rs := redisFor(t, redisserver.Start(t, ""))
	before := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	after := time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC)
	for name, s := range map[string]store{"memory": newMemory(), "redis": rs} {
		for _, l := range []routingv1.Limits{{TokensPerDay: 100}, {TokensPerMonth: 100}} {
			c := client(l)
			prefix := "rollover/" + name
			tk := newTicket(prefix, c, 10, before)
			if v, _ := s.admit(tk, before); !v.Allowed {
				t.Fatalf("%s %+v: the first request was refused", name, l)
			}
			_ = settleNow(s, tk, 100) // the whole quota, charged after midnight
			v, err := s.admit(newTicket(prefix, c, 10, before), before)
			if err != nil || v.Allowed {
				t.Fatalf("%s %+v: a request of the spent day passed (err %v)", name, l, err)
			}
			if v.Allowed || (v.Refused != LimitTokensPerDay && v.Refused != LimitTokensPerMonth) {
				t.Fatalf("%s: refused by %q", name, v.Refused)
			}
			if v, err := s.admit(newTicket(prefix, c, 10, after), after); err != nil || !v.Allowed {
				t.Fatalf("%s %+v: the new period's first request was refused by %q (err %v)", name, l, v.Refused, err)
			}
		}
	}
}

// Proves L7. A Redis restart (appendonly yes, the configuration docs/limits.md recommends) keeps a
// spent quota.
func TestRedisRestartKeepsTheQuota(t *testing.T) {
	srv := redisserver.Start(t, "")
	rs := redisFor(t, srv)
	c := client(routingv1.Limits{TokensPerDay: 50})
	now := time.Now()
	tk := newTicket("restart", c, 50, now)
	if v, err := rs.admit(tk, now); err != nil || !v.Allowed {
		t.Fatalf("first request: %+v %v", v, err)
	}
	srv.Stop()
	srv.Start()
	var v Verdict
	var err error
	for range 20 { // the client reconnects on the next call
		if v, err = rs.admit(newTicket("restart", c, 1, now), now); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || v.Allowed || v.Refused != LimitTokensPerDay {
		t.Fatalf("after a restart the day's quota was forgotten: %+v %v", v, err)
	}
}

// Proves L6. A Redis that does not answer costs a request at most the timeout, then gives the failure
// mode; requests in the next second do not wait at all.
func TestUnreachableRedisGivesTheFailureModeWithinTheTimeout(t *testing.T) {
	for _, closed := range []bool{false, true} {
		// A listener that accepts and never answers: a hung Redis, not a refused connection.
		srv := redisserver.Start(t, "")
		addr := srv.Addr
		srv.Stop()
		hang := hangingListener(t)
		for _, a := range []string{addr, hang} {
			l := New(&routingv1.LimitsStore{KeyPrefix: "f", FailClosed: closed, Redis: &routingv1.Redis{Address: a, Timeout: "100ms"}}, "", NewMetrics(prometheus.NewRegistry()), slog.New(slog.DiscardHandler))
			start := time.Now()
			v, tk := l.Admit(client(routingv1.Limits{RequestsPerMinute: 1}), 1)
			if took := time.Since(start); took > time.Second {
				t.Fatalf("%s: the admission took %v with a 100ms timeout", a, took)
			}
			if tk != nil || v.Allowed == closed || v.Unavailable != closed {
				t.Fatalf("%s failClosed=%v: verdict %+v", a, closed, v)
			}
			start = time.Now()
			l.Admit(client(routingv1.Limits{RequestsPerMinute: 1}), 1)
			if took := time.Since(start); took > 20*time.Millisecond {
				t.Fatalf("%s: the next request waited %v for a store that just failed", a, took)
			}
			if closed {
				h := http.Header{}
				v.WriteHeaders(h)
				if h.Get("Retry-After") != "1" {
					t.Fatalf("fail-closed Retry-After %q, want 1", h.Get("Retry-After"))
				}
			}
			_ = l.Close()
		}
	}
}

// Proves L3. The headers OpenAI's clients read: limit, remaining and reset per requests and tokens, and
// on a refusal Retry-After in whole seconds (rounded up) and retry-after-ms.
func TestVerdictHeaders(t *testing.T) {
	m := newMemory()
	c := client(routingv1.Limits{RequestsPerMinute: 2, TokensPerMinute: 600})
	now := time.Now()
	for range 2 {
		v, _ := m.admit(newTicket("h", c, 100, now), now)
		if !v.Allowed {
			t.Fatal("refused within the limit")
		}
	}
	v, _ := m.admit(newTicket("h", c, 100, now), now)
	h := http.Header{}
	v.WriteHeaders(h)
	want := map[string]string{
		"X-Ratelimit-Limit-Requests": "2", "X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "1m0s",
		"X-Ratelimit-Limit-Tokens": "600", "X-Ratelimit-Remaining-Tokens": "400", "X-Ratelimit-Reset-Tokens": "20s",
		"Retry-After": "30", "Retry-After-Ms": "30000",
	}
	for k, w := range want {
		if h.Get(k) != w {
			t.Errorf("%s = %q, want %q", k, h.Get(k), w)
		}
	}
}

// Proves L3. Concurrent requests: a client at its limit is refused until one of its requests
// ends, in both stores.
func TestConcurrentRequestsAreReleasedWhenARequestEnds(t *testing.T) {
	rs := redisFor(t, redisserver.Start(t, ""))
	c := client(routingv1.Limits{ConcurrentRequests: 2})
	now := time.Now()
	for name, s := range map[string]store{"memory": newMemory(), "redis": rs} {
		var held []*Ticket
		for i := range 2 {
			tk := newTicket("conc/"+name, c, 1, now)
			if v, err := s.admit(tk, now); err != nil || !v.Allowed {
				t.Fatalf("%s: request %d refused (%v)", name, i, err)
			}
			held = append(held, tk)
		}
		v, err := s.admit(newTicket("conc/"+name, c, 1, now), now)
		if err != nil || v.Allowed || v.Refused != LimitConcurrentRequests {
			t.Fatalf("%s: a third concurrent request: %+v %v", name, v, err)
		}
		if err := settleNow(s, held[0], 1); err != nil {
			t.Fatal(err)
		}
		if v, err := s.admit(newTicket("conc/"+name, c, 1, now), now); err != nil || !v.Allowed {
			t.Fatalf("%s: refused after a request ended: %+v %v", name, v, err)
		}
	}
}

// Proves L10. A Redis that does not know the script (its first call, or after a restart or a
// SCRIPT FLUSH) gets it loaded and the batch once more, with the same arguments: the request is
// counted once, not twice.
func TestABatchSentAgainAfterNOSCRIPTCountsItsRequestsOnce(t *testing.T) {
	srv := redisserver.Start(t, "")
	adm := admin(t, srv.Addr)
	l := replica(t, srv.Addr, "2s", false)
	c := client(routingv1.Limits{TokensPerDay: 1_000_000})
	ctx := context.Background()
	for i, flush := range []bool{false, true} { // the first call; then after the scripts are gone
		if flush {
			if err := adm.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if _, tk := l.Admit(c, 100); tk == nil {
			t.Fatal("refused within the limit")
		}
		day, _ := adm.Get(ctx, newTicket("batch", c, 1, time.Now()).dayKey()).Int64()
		if want := int64(100 * (i + 1)); day != want {
			t.Fatalf("after %d admissions of 100 tokens (the last one sent again after NOSCRIPT): %d tokens today, want %d", i+1, day, want)
		}
	}
}
