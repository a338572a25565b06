/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/redisserver"
)

// replica is one proxy replica's limiter on the Redis at addr.
func replica(t testing.TB, addr, timeout string, failClosed bool) *Limiter {
	l := New(&routingv1.LimitsStore{KeyPrefix: "batch", FailClosed: failClosed, Redis: &routingv1.Redis{Address: addr, Timeout: timeout}},
		"", NewMetrics(prometheus.NewRegistry()), slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// admin is a plain client of the test's Redis, to pause it and read what it did.
func admin(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// scriptCalls is how many script calls (EVALSHA and EVAL) Redis has run.
func scriptCalls(t testing.TB, c *redis.Client) int {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	return int(redisserver.ScriptCalls(info))
}

// Proves L10 and L4. Two replicas with 64 concurrent requests each, queued behind a round trip
// that Redis holds (CLIENT PAUSE): each replica sends what queued in one script call, the two
// still admit 60 of 128 (one shared limit of 60 per minute), and each refused request gets its
// own refusal with its own headers.
func TestConcurrentAdmissionsShareARoundTripAndOneLimit(t *testing.T) {
	srv := redisserver.Start(t, "")
	adm := admin(t, srv.Addr)
	replicas := []*Limiter{replica(t, srv.Addr, "2s", false), replica(t, srv.Addr, "2s", false)}
	c := client(routingv1.Limits{RequestsPerMinute: 60})
	for _, l := range replicas { // connect and load the script, outside the count
		warm := &routingv1.Client{Name: "warm", Limits: &routingv1.Limits{RequestsPerMinute: 1000}}
		if _, tk := l.Admit(warm, 1); tk == nil {
			t.Fatal("the warm-up request was not admitted")
		}
	}
	before := scriptCalls(t, adm)
	if err := adm.Do(context.Background(), "CLIENT", "PAUSE", "300", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		v  Verdict
		tk *Ticket
	}
	answers := make(chan answer, 128)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 128 {
		wg.Go(func() {
			v, tk := replicas[i%2].Admit(c, 1)
			answers <- answer{v, tk}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(answers)
	calls := scriptCalls(t, adm) - before
	admitted := 0
	for a := range answers {
		if !a.v.Requests.Set || a.v.Requests.Limit != 60 {
			t.Fatalf("a verdict without its requests window: %+v", a.v)
		}
		if a.v.Allowed {
			admitted++
			continue
		}
		if a.tk != nil || a.v.Refused != LimitRequestsPerMinute || a.v.RetryAfter <= 0 || a.v.RetryAfter > 2*time.Second || a.v.Requests.Remaining > 0 {
			t.Fatalf("a refusal inside a batch is not its own: %+v", a.v)
		}
	}
	if admitted < 60 || admitted > 60+int(elapsed.Seconds())+1 {
		t.Fatalf("two replicas admitted %d of 128 in %v, want 60 (one shared limit of 60 per minute)", admitted, elapsed)
	}
	// Each replica: the request the pause held, then what queued behind it (at most 2 batches
	// more if a request came late).
	if calls > 6 {
		t.Fatalf("128 concurrent admissions took %d script calls, want one per replica's round trip (at most 6)", calls)
	}
}

// Proves L6 and L10. Redis stops answering while a batch is in flight and others queue behind
// it: each request gets the failure mode within the timeout of its own arrival, not the
// in-flight batch's timeout plus its own.
func TestABatchThatRedisLeavesUnansweredGivesEachRequestTheFailureModeInTime(t *testing.T) {
	const timeout = 500 * time.Millisecond
	for _, closed := range []bool{false, true} {
		srv := redisserver.Start(t, "")
		adm := admin(t, srv.Addr)
		l := replica(t, srv.Addr, timeout.String(), closed)
		c := client(routingv1.Limits{RequestsPerMinute: 1000})
		if _, tk := l.Admit(c, 1); tk == nil {
			t.Fatal("the warm-up request was not admitted")
		}
		if err := adm.Do(context.Background(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var slowest time.Duration
		for i := range 64 {
			wg.Go(func() {
				if i >= 32 {
					time.Sleep(timeout / 2) // behind the first ones' round trip
				}
				t0 := time.Now()
				v, tk := l.Admit(c, 1)
				took := time.Since(t0)
				mu.Lock()
				slowest = max(slowest, took)
				mu.Unlock()
				if tk != nil || v.Allowed == closed || v.Unavailable != closed || v.Requests.Set {
					t.Errorf("failClosed=%v request %d: verdict %+v, want the failure mode", closed, i, v)
				}
			})
		}
		wg.Wait()
		if slowest > timeout+timeout/2 { // a wait behind the stalled batch would be about 2 timeouts
			t.Fatalf("failClosed=%v: a request waited %v for a Redis that stopped answering, with a timeout of %v", closed, slowest, timeout)
		}
	}
}

// Proves L10. An admission whose caller stopped waiting but that Redis admitted is refunded: its
// concurrency slot and its tokens come back, since its request never went upstream.
func TestAnAdmissionAnsweredAfterItsCallerLeftIsRefunded(t *testing.T) {
	srv := redisserver.Start(t, "")
	rs := redisFor(t, srv)
	c := client(routingv1.Limits{ConcurrentRequests: 1, TokensPerMinute: 1000})
	now := time.Now()
	late := &admission{t: newTicket("refund", c, 600, now), done: make(chan struct{})}
	late.state.Store(abandoned) // its caller's timeout passed while the batch was in flight
	if err := rs.send([]*admission{late}, nil, nil); err != nil || !late.v.Allowed {
		t.Fatalf("the late admission: %+v %v", late.v, err)
	}
	var v Verdict
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		tk := newTicket("refund", c, 600, now)
		var err error
		if v, err = rs.admit(tk, now); err != nil {
			t.Fatal(err)
		}
		if v.Allowed {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !v.Allowed {
		t.Fatalf("the slot and tokens of an admission nobody waited for were never given back: %+v", v)
	}
	if v.Tokens.Remaining < 1000-600-1 {
		t.Fatalf("tokens remaining %d after the refund and a new reservation of 600, want about 400", v.Tokens.Remaining)
	}
}

// Proves L10. A settlement that changes nothing (a client with only a request rate, or a charge
// equal to its reservation without a concurrency slot) costs Redis no call.
func TestASettlementThatChangesNothingIsNotSent(t *testing.T) {
	srv := redisserver.Start(t, "")
	adm := admin(t, srv.Addr)
	l := replica(t, srv.Addr, "2s", false)
	if _, tk := l.Admit(&routingv1.Client{Name: "warm", Limits: &routingv1.Limits{RequestsPerMinute: 1000}}, 1); tk == nil {
		t.Fatal("the warm-up request was not admitted") // it loads the script
	}
	for _, c := range []*routingv1.Client{client(routingv1.Limits{RequestsPerMinute: 100}), client(routingv1.Limits{TokensPerMinute: 1000})} {
		before := scriptCalls(t, adm)
		_, tk := l.Admit(c, 10)
		if tk == nil {
			t.Fatal("refused within the limit")
		}
		l.Settle(tk, 10)
		time.Sleep(100 * time.Millisecond) // a settlement sent would have reached Redis by now
		if calls := scriptCalls(t, adm) - before; calls != 1 {
			t.Fatalf("%+v: an admission and a settlement that changes nothing took %d script calls, want 1", *c.Limits, calls)
		}
	}
}

// Proves L10, L12. The concurrency slots of requests whose replica died without settling
// them free themselves when their leases end, while the requests of the replica that lives keep
// theirs past a lease, since they renew them; until then the living replica counts them.
func TestTheSlotsOfADeadReplicaEndWithTheirLeases(t *testing.T) {
	defer func(l time.Duration) { lease = l }(lease)
	lease = time.Second
	srv := redisserver.Start(t, "")
	c := client(routingv1.Limits{ConcurrentRequests: 3})
	dead, live := redisFor(t, srv), redisFor(t, srv)
	admit := func(s *redisStore) Verdict {
		now := time.Now()
		v, err := s.admit(newTicket("lease", c, 1, now), now)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The first replica dies with two slots held (it never calls again); the other holds one.
	if !admit(dead).Allowed || !admit(dead).Allowed || !admit(live).Allowed {
		t.Fatal("refused within the limit")
	}
	_ = dead.close() // it calls Redis no more: nothing renews its requests' leases
	time.Sleep(lease / 2)
	if v := admit(live); v.Allowed || v.Refused != LimitConcurrentRequests {
		t.Fatalf("the living replica did not count the dead one's slots: %+v", v)
	}
	time.Sleep(lease/2 + lease/4) // past the dead one's leases and the living one's first
	if v := admit(live); !v.Allowed {
		t.Fatalf("the dead replica's slots outlived their lease: %+v", v)
	}
	if v, w := admit(live), admit(live); !v.Allowed || w.Allowed { // it holds 2, then 3 of 3
		t.Fatalf("the living replica's own slot ended with the dead one's, though its request renewed it: %+v", v)
	}
}

// Proves L10. A batch whose admissions all fit is decided on the batch's sums (the script walks
// no entry and answers six numbers, not seven per admission), yet each admission still gets its
// own headers, and the counters are what one admission at a time would have left (the call
// asks for no allowance); the next
// batch, which reaches a limit, is decided one by one from there.
func TestABatchThatFitsIsDecidedOnItsSumsWithEachAdmissionsOwnHeaders(t *testing.T) {
	rs := redisFor(t, redisserver.Start(t, ""))
	c := client(routingv1.Limits{RequestsPerMinute: 1000, TokensPerMinute: 100_000, ConcurrentRequests: 12, TokensPerDay: 1_000_000, TokensPerMonth: 1_000_000})
	batch := func(n int) ([]*admission, []int64) {
		var admits []*admission
		for range n {
			tk := newTicket("fit", c, 100, time.Now())
			tk.lease = rs.leaseName()
			admits = append(admits, &admission{t: tk, done: make(chan struct{})})
		}
		call := groupCalls(admits, nil, nil)[0]
		keys, args := call.encode()
		res, err := batchScript.Eval(context.Background(), rs.c, keys, args...).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		vs, err := call.answers(redis.NewCmdResult(toAny(res), nil))
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range admits {
			a.v = vs[i]
		}
		return admits, res
	}
	admits, res := batch(10)
	if len(res) != 6 {
		t.Fatalf("a batch of 10 admissions that all fit was answered with %d values, want 6 (decided on its sums)", len(res))
	}
	for i, a := range admits {
		if !a.v.Allowed || a.v.Requests.Remaining != int64(999-i) || a.v.Tokens.Remaining != int64(99_900-100*i) {
			t.Fatalf("admission %d of the batch: %+v, want allowed with %d requests and %d tokens remaining", i, a.v, 999-i, 99_900-100*i)
		}
	}
	tk := admits[0].t
	day, _ := rs.c.Get(context.Background(), tk.dayKey()).Int64()
	held, _ := rs.c.ZCard(context.Background(), tk.leasesKey()).Result()
	if day != 1000 || held != 10 {
		t.Fatalf("after the batch: %d tokens today and %d held, want 1000 and 10", day, held)
	}
	admits, res = batch(5) // 2 fit under 12 concurrent
	if len(res) != 5*resultWidth {
		t.Fatalf("a batch that reaches a limit was answered with %d values, want %d (one by one)", len(res), 5*resultWidth)
	}
	for i, a := range admits {
		if want := i < 2; a.v.Allowed != want || (!want && a.v.Refused != LimitConcurrentRequests) {
			t.Fatalf("admission %d of the second batch: %+v, want allowed=%v (12 concurrent, 10 held)", i, a.v, want)
		}
	}
	if r := admits[1].v.Requests.Remaining; r != 988 && r != 989 { // 1000 less 12, and a request back per 60 ms since
		t.Fatalf("the second batch's last admitted request sees %d requests remaining, want 988", r)
	}
}

func toAny(res []int64) []any {
	out := make([]any, len(res))
	for i, v := range res {
		out[i] = v
	}
	return out
}
