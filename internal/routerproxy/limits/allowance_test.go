/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/redisserver"
)

// load sends n requests of c through replicas, 32 at a time on each, reserving 100 tokens and
// using 90; it returns how many were admitted and how long it took.
func load(t *testing.T, replicas []*Limiter, c *routingv1.Client, n int) (int, time.Duration) {
	var sent, admitted atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for _, l := range replicas {
		for range 32 {
			wg.Go(func() {
				for sent.Add(1) <= int64(n) {
					v, tk := l.Admit(c, 100)
					if v.Allowed != (tk != nil) {
						t.Errorf("allowed=%v with ticket %v", v.Allowed, tk)
					}
					if tk != nil {
						admitted.Add(1)
						l.Settle(tk, 90)
					}
				}
			})
		}
	}
	wg.Wait()
	return int(admitted.Load()), time.Since(start)
}

// Proves L11. Two replicas whose requests arrive together take allowances, and
// still admit no more than the one shared limit: an allowance is counted in Redis before it is
// used.
func TestAllowancesKeepOneSharedLimitAcrossReplicas(t *testing.T) {
	srv := redisserver.Start(t, "")
	replicas := []*Limiter{replica(t, srv.Addr, "2s", false), replica(t, srv.Addr, "2s", false)}
	const rpm = 3000
	c := client(routingv1.Limits{RequestsPerMinute: rpm, ConcurrentRequests: 1 << 20})
	admitted, took := load(t, replicas, c, 6000)
	// A minute's limit, and what it renews while the test runs (one request per 20 ms).
	if most := rpm + int(took.Seconds()*rpm/60) + 1; admitted > most {
		t.Fatalf("two replicas with allowances admitted %d of 6000 in %v, want at most %d (one shared limit of %d per minute)", admitted, took, most, rpm)
	}
	if admitted < rpm-2*maxAllowance {
		t.Fatalf("two replicas admitted %d of 6000, want about %d: allowances held back what the limit allows", admitted, rpm)
	}
}

// Proves L11. Far from every limit, allowances take most admissions' round trips
// away, and what an allowance did not use goes back to Redis: once the requests are over, the
// day's counter is exactly the tokens the requests used, and neither replica holds a
// concurrency slot.
func TestWhatAnAllowanceDidNotUseGoesBack(t *testing.T) {
	srv := redisserver.Start(t, "")
	adm := admin(t, srv.Addr)
	replicas := []*Limiter{replica(t, srv.Addr, "2s", false), replica(t, srv.Addr, "2s", false)}
	const huge = int64(1) << 40
	c := client(routingv1.Limits{RequestsPerMinute: huge, TokensPerMinute: huge, ConcurrentRequests: 1 << 20, TokensPerDay: huge, TokensPerMonth: huge})
	before := scriptCalls(t, adm)
	admitted, _ := load(t, replicas, c, 2000)
	calls := scriptCalls(t, adm) - before
	if admitted != 2000 {
		t.Fatalf("admitted %d of 2000 far from every limit", admitted)
	}
	// Batches alone take a call per 15 requests or so here (about 135 calls); allowances of 64,
	// about one per 45.
	if calls > admitted/20 {
		t.Fatalf("%d admissions and their settlements took %d script calls, want at most %d with allowances", admitted, calls, admitted/20)
	}
	tk := newTicket("batch", c, 1, time.Now())
	ctx := context.Background()
	deadline := time.Now().Add(allowanceLife + 2*time.Second)
	for {
		day, _ := adm.Get(ctx, tk.dayKey()).Int64()
		leases, _ := adm.ZCard(ctx, tk.leasesKey()).Result()
		grants, _ := adm.HLen(ctx, tk.grantsKey()).Result()
		slots := leases + grants
		if day == int64(admitted)*90 && slots == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the requests: %d tokens today and %d slots held (leases and allowances), want %d (2000 requests of 90) and none", allowanceLife+2*time.Second, day, slots, admitted*90)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Proves L11. Only the settlements of a client with an allowance wait for a round trip to ride
// along with: a client near its limit (here one concurrent request, which no allowance fits)
// has its slot back in Redis at once, so another replica admits its next request.
func TestASettlementNearALimitIsSentAtOnce(t *testing.T) {
	defer func(d time.Duration) { settleDelay = d }(settleDelay)
	settleDelay = 3 * time.Second // what a settlement that waits would wait
	srv := redisserver.Start(t, "")
	a, b := replica(t, srv.Addr, "2s", false), replica(t, srv.Addr, "2s", false)
	c := client(routingv1.Limits{ConcurrentRequests: 1})
	_, tk := a.Admit(c, 1)
	if tk == nil {
		t.Fatal("refused within the limit")
	}
	if v, _ := b.Admit(c, 1); v.Allowed {
		t.Fatal("a second concurrent request passed a limit of one")
	}
	a.Settle(tk, 1)
	start := time.Now()
	for {
		if v, tk := b.Admit(c, 1); v.Allowed {
			b.Settle(tk, 1)
			return
		}
		if time.Since(start) > time.Second {
			t.Fatalf("the other replica was still refused %v after the request ended: its settlement waited", time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
