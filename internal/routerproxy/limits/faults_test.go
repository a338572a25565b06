/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/redisserver"
)

// This file is the limits' fault tests (docs/limits.md, "When Redis fails"): a real redis-server
// restarted with and without its append-only file, flushed, paused past the timeout, or slowed
// down by a proxy, while a client's requests come and go through two replicas. Each test counts
// what reaches the upstream (the requests admitted with a ticket) and checks that the client has
// its whole limit back, through a fresh replica, well within one lease.

// upstream counts the requests in flight at the backend and the most there ever were.
type upstream struct{ now, most atomic.Int64 }

func (u *upstream) enter() {
	n := u.now.Add(1)
	for m := u.most.Load(); n > m && !u.most.CompareAndSwap(m, n); m = u.most.Load() {
	}
}

func (u *upstream) leave() { u.now.Add(-1) }

// burst sends the requests of 16 callers through the replicas until stop closes: each admitted
// request stays at the upstream for hold, then is settled with used tokens of its reservation
// of 100.
func burst(replicas []*Limiter, c *routingv1.Client, up *upstream, hold time.Duration, used int64, stop chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				v, tk := replicas[(i+n)%len(replicas)].Admit(c, 100)
				if tk == nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if v.Allowed {
					up.enter()
					time.Sleep(hold)
					up.leave()
				}
				replicas[(i+n)%len(replicas)].Settle(tk, used)
			}
		})
	}
	return &wg
}

// wholeLimitBack waits until a fresh replica admits n concurrent requests of c and refuses the
// next, for at most within; it returns how long that took, and fails the test when it never did.
func wholeLimitBack(t *testing.T, addr string, c *routingv1.Client, n int, within time.Duration) time.Duration {
	t.Helper()
	fresh := replica(t, addr, "2s", true)
	start := time.Now()
	var got int
	var last Verdict
	for time.Since(start) < within {
		var held []*Ticket
		got = 0
		for range n + 1 {
			v, tk := fresh.Admit(c, 100)
			last = v
			if tk != nil {
				held = append(held, tk)
				got++
			} else {
				break
			}
		}
		for _, tk := range held {
			fresh.Settle(tk, 100)
		}
		if got == n && last.Refused == LimitConcurrentRequests {
			// The settlements above must be through before the test goes on.
			time.Sleep(200 * time.Millisecond)
			return time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%v after the fault a fresh replica admitted %d concurrent requests of %d (last verdict %+v): the client did not get its whole limit back well within one lease (%v)", within, got, n, last, lease)
	return 0
}

// delayProxy is a TCP proxy to target that holds every chunk it relays for *delay: a slow Redis.
func delayProxy(t *testing.T, target string, delay *atomic.Int64) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	relay := func(dst, src net.Conn) {
		defer func() { _ = dst.Close(); _ = src.Close() }()
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				time.Sleep(time.Duration(delay.Load()))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			go relay(out, in)
			go relay(in, out)
		}
	}()
	return l.Addr().String()
}

// Proves L12. A client allowed 4 concurrent requests and 1,000,000 tokens a day sends requests
// through two replicas (fail-closed, a timeout of 100 ms) while Redis meets a fault mid-flight.
// At the upstream there are never more than 4 requests at once, plus, when Redis lost its state
// (a restart without its file, FLUSHALL), the requests in flight then (at most 4 more); a quota
// never goes below 0; and once Redis answers again, a fresh replica has the client's whole limit
// back, long before one lease (30 s) could have freed a leaked slot.
func TestEveryClientHasItsWholeLimitBackAfterARedisFault(t *testing.T) {
	const limit = 4
	for _, f := range []struct {
		name  string
		slack int64
		// fault breaks Redis, and returns what makes it answer again.
		fault func(srv *redisserver.Server, delay *atomic.Int64) func()
	}{
		{"restart with its append-only file", 0, func(srv *redisserver.Server, _ *atomic.Int64) func() {
			srv.Stop()
			return srv.Start
		}},
		{"restart without its file", limit, func(srv *redisserver.Server, _ *atomic.Int64) func() {
			srv.Forget()
			return srv.Start
		}},
		{"FLUSHALL", limit, func(srv *redisserver.Server, _ *atomic.Int64) func() {
			if err := admin(t, srv.Addr).FlushAll(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}},
		{"SIGSTOP longer than the timeout", 0, func(srv *redisserver.Server, _ *atomic.Int64) func() {
			srv.Pause()
			return srv.Resume
		}},
		{"a Redis slower than the timeout", 0, func(_ *redisserver.Server, delay *atomic.Int64) func() {
			delay.Store(int64(150 * time.Millisecond))
			return func() { delay.Store(0) }
		}},
	} {
		t.Run(f.name, func(t *testing.T) {
			srv := redisserver.Start(t, "")
			var delay atomic.Int64
			addr := delayProxy(t, srv.Addr, &delay)
			replicas := []*Limiter{replica(t, addr, "100ms", true), replica(t, addr, "100ms", true)}
			c := client(routingv1.Limits{ConcurrentRequests: limit, TokensPerDay: 1_000_000})
			up := &upstream{}
			stop := make(chan struct{})
			wg := burst(replicas, c, up, 30*time.Millisecond, 10, stop)
			time.Sleep(300 * time.Millisecond)
			recover := f.fault(srv, &delay)
			time.Sleep(500 * time.Millisecond)
			recover()
			time.Sleep(300 * time.Millisecond)
			close(stop)
			wg.Wait()
			if most := up.most.Load(); most > limit+f.slack {
				t.Errorf("%d requests at once reached the upstream, want at most %d (the limit) plus %d", most, limit, f.slack)
			}
			took := wholeLimitBack(t, srv.Addr, c, limit, lease/3)
			day, _ := admin(t, srv.Addr).Get(context.Background(), newTicket("batch", c, 1, time.Now()).dayKey()).Int64()
			if day < 0 {
				t.Errorf("the day's quota counter is %d after the fault, below 0: more than the whole quota is free", day)
			}
			t.Logf("the whole limit was back %v after the burst; %d at once at the upstream; %d tokens today", took, up.most.Load(), day)
		})
	}
}

// Proves L12. An admission that Redis counts after its caller stopped waiting (Redis paused past
// the timeout, or slower than it) and whose answer never arrived is refunded: the client's one
// concurrent request is free again as soon as Redis answers, not one lease later.
func TestAnAdmissionCountedAfterItsTimeoutIsRefunded(t *testing.T) {
	for _, f := range []struct {
		name  string
		fault func(srv *redisserver.Server, delay *atomic.Int64) func()
	}{
		{"SIGSTOP longer than the timeout", func(srv *redisserver.Server, _ *atomic.Int64) func() {
			srv.Pause()
			return srv.Resume
		}},
		{"a Redis slower than the timeout", func(_ *redisserver.Server, delay *atomic.Int64) func() {
			delay.Store(int64(300 * time.Millisecond))
			return func() { delay.Store(0) }
		}},
	} {
		t.Run(f.name, func(t *testing.T) {
			srv := redisserver.Start(t, "")
			var delay atomic.Int64
			l := replica(t, delayProxy(t, srv.Addr, &delay), "100ms", true)
			c := client(routingv1.Limits{ConcurrentRequests: 1, TokensPerDay: 1_000_000})
			_, tk := l.Admit(c, 100) // connects and loads the script
			if tk == nil {
				t.Fatal("refused within the limit")
			}
			l.Settle(tk, 100)
			time.Sleep(100 * time.Millisecond)
			recover := f.fault(srv, &delay)
			if v, tk := l.Admit(c, 100); tk != nil || !v.Unavailable {
				t.Fatalf("an admission Redis did not answer in time: %+v, want 503 (fail-closed)", v)
			}
			time.Sleep(400 * time.Millisecond)
			recover()
			time.Sleep(500 * time.Millisecond) // Redis runs what waited: the late admission counts
			wholeLimitBack(t, srv.Addr, c, 1, lease/3)
		})
	}
}

// Proves L12. The refund of an admission whose round trip failed may reach Redis before the
// admission itself (two connections, a Redis that resumes): the admission then counts nothing.
func TestARefundThatOvertakesItsAdmissionVoidsIt(t *testing.T) {
	rs := redisFor(t, redisserver.Start(t, ""))
	c := client(routingv1.Limits{ConcurrentRequests: 1, TokensPerDay: 1000})
	late := newTicket("void", c, 600, time.Now())
	late.lease = rs.leaseName()
	late.leaseEnd.Store(time.Now().Add(lease).UnixNano())
	if err := rs.send(nil, []settlement{{t: late, void: true}}, nil); err != nil {
		t.Fatal(err)
	}
	// The admission runs now, and its answer is lost (nothing refunds it again).
	keys, args := groupCalls([]*admission{{t: late}}, nil, nil)[0].encode()
	if err := batchScript.Eval(context.Background(), rs.c, keys, args...).Err(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if v, err := rs.admit(newTicket("void", c, 600, now), now); err != nil || !v.Allowed {
		t.Fatalf("after an admission its refund had voided: %+v %v, want the slot and the 1000 tokens free", v, err)
	}
}

// holdAllowance admits n requests of c on l together, so that l takes an allowance, and returns
// their tickets, still in flight.
func holdAllowance(t *testing.T, l *Limiter, c *routingv1.Client, n int) []*Ticket {
	t.Helper()
	rs := l.store.(*redisStore)
	for range 20 {
		tickets := make([]*Ticket, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, tickets[i] = l.Admit(c, 100) })
		}
		wg.Wait()
		rs.b.mu.Lock()
		has := len(rs.b.allowances) > 0
		rs.b.mu.Unlock()
		for _, tk := range tickets {
			if tk == nil {
				t.Fatal("refused far from every limit")
			}
		}
		if has {
			return tickets
		}
		for _, tk := range tickets {
			l.Settle(tk, 100)
		}
	}
	t.Fatal("no allowance after 20 bursts far from every limit")
	return nil
}

// Proves L13. Redis forgets a client's counters (FLUSHALL; a restart without its file is the
// same) while the client holds an allowance and requests in flight: their refunds (used less than
// reserved, the allowance's unused part) apply to nothing, so the day's counter is exactly what
// was admitted after the loss, never less (and never below 0).
func TestRefundsAfterRedisLostItsCountersFreeNothing(t *testing.T) {
	srv := redisserver.Start(t, "")
	adm := admin(t, srv.Addr)
	l := replica(t, srv.Addr, "2s", false)
	c := client(routingv1.Limits{TokensPerDay: 10_000_000})
	held := holdAllowance(t, l, c, 16)
	if err := adm.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	fresh := replica(t, srv.Addr, "2s", false)
	_, after := fresh.Admit(c, 100) // counted in the new counter, in flight
	if after == nil {
		t.Fatal("refused after FLUSHALL")
	}
	for _, tk := range held {
		l.Settle(tk, 10) // each refunds 90
	}
	_ = l.Close() // gives its allowance back
	day := newTicket("batch", c, 1, time.Now()).dayKey()
	time.Sleep(500 * time.Millisecond)
	if used, _ := adm.Get(context.Background(), day).Int64(); used != 100 {
		t.Fatalf("after FLUSHALL, one admission of 100 and the refunds of what was admitted before it: %d tokens today, want 100 (the refunds apply to counters Redis no longer has)", used)
	}
}

// Proves L13, L14. A client with an allowance whose request used far more than it reserved
// (no max_tokens) is in debt for minutes: its allowance is given back, so its next request is
// decided in Redis and refused, and Retry-After is at most the minute of the window it was
// refused from.
func TestAnAllowanceEndsWhenItsClientIsInDebt(t *testing.T) {
	srv := redisserver.Start(t, "")
	l := replica(t, srv.Addr, "2s", false)
	c := client(routingv1.Limits{TokensPerMinute: 1_000_000})
	held := holdAllowance(t, l, c, 16)
	l.Settle(held[0], 3_000_000) // three minutes of the limit
	v, tk := l.Admit(c, 100)
	if tk != nil || v.Allowed {
		t.Fatalf("a client three minutes in debt was admitted (from its allowance?) with reset-tokens %v: %+v", v.Tokens.Reset, v)
	}
	if v.Refused != LimitTokensPerMinute || v.RetryAfter > time.Minute || v.RetryAfter < time.Minute-time.Second {
		t.Fatalf("the refusal of a client three minutes in debt: %+v, want tokens_per_minute with Retry-After of the window's minute", v)
	}
	if v.Tokens.Reset < 2*time.Minute {
		t.Fatalf("x-ratelimit-reset-tokens %v for a client three minutes in debt", v.Tokens.Reset)
	}
}

// Proves L12. A replica stops in the middle of a burst, its requests still in flight and never
// settled, and a new one starts: the upstream never sees more than the limit, and the slots of
// the stopped replica's requests are free again within one lease of its stop.
func TestAReplicaStoppedDuringABurstFreesItsSlotsWithinOneLease(t *testing.T) {
	defer func(l time.Duration) { lease = l }(lease)
	lease = 3 * time.Second
	const limit = 4
	srv := redisserver.Start(t, "")
	c := client(routingv1.Limits{ConcurrentRequests: limit, TokensPerDay: 1_000_000})
	up := &upstream{}
	doomed := replica(t, srv.Addr, "100ms", true)
	stop := make(chan struct{})
	wg := burst([]*Limiter{doomed, replica(t, srv.Addr, "100ms", true)}, c, up, 200*time.Millisecond, 10, stop)
	time.Sleep(500 * time.Millisecond)
	_ = doomed.Close() // its requests in flight are never settled
	stopped := time.Now()
	late := replica(t, srv.Addr, "100ms", true)
	wg2 := burst([]*Limiter{late}, c, up, 50*time.Millisecond, 10, stop)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	wg2.Wait()
	if most := up.most.Load(); most > limit {
		t.Errorf("%d requests at once reached the upstream, want at most %d", most, limit)
	}
	wholeLimitBack(t, srv.Addr, c, limit, lease+lease/3-time.Since(stopped))
	t.Logf("the whole limit was back %v after the replica stopped", time.Since(stopped))
}
