/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// This file is the Redis store's allowances: when a client's requests arrive together (a batch
// of two or more admissions) and its limits are far from reached, the batch's script call also
// grants this replica an allowance, up to maxAllowance more admissions (with their tokens and
// concurrency slots), counted in Redis at once as if they had been made. The replica then admits
// the client's next requests alone, in memory, without a round trip; their settlements go to
// Redis as any other's, and whatever is left of the allowance goes back with the next call, or
// after allowanceLife at the latest.
//
// Note: every limit stays exact across replicas, since an allowance is counted before it is used:
// replicas together never admit more than the limit. What an allowance costs the others is
// capacity held for at most allowanceLife, and it is at most a sixteenth of what remains of a
// rate or of the concurrent requests, and a 256th of what remains of a quota (a replica that
// dies holding one loses that much of the period). Near a limit no allowance is granted and
// every request is decided in Redis, one batch at a time, as before.
//
// Note: at 64 concurrent requests on two cores, a round trip per batch still cost the proxy and
// Redis about a third of the hop's CPU (docs/limits.md, "What it costs"): the request goroutine's
// park and wake, the pipeline, and Redis's commands per call. An allowance of 256 turns that
// many round trips' waits into map look-ups: at 64 (and settlements waiting 5 ms) Redis still
// ran a script call per 30 requests, at 256 (and 20 ms) one per 100, and Redis's CPU per request
// halved (4 to 2 µs; docs/limits.md, "What it costs").

// maxAllowance is the most admissions one allowance grants; minAllowance the fewest worth one.
const (
	maxAllowance = 256
	minAllowance = 8
)

// allowanceLife is how long an allowance may be used: what it holds of the others' capacity is
// given back by then, and the headers it works out stay close to Redis's.
var allowanceLife = time.Second

// allowance is admissions this replica may make alone for one client and its limits.
type allowance struct {
	// t is a ticket of the admission it was granted with: the client's counters, limits and the
	// periods its tokens were charged to. id names it in Redis, where its slots (the admissions
	// it has left and its requests in flight) are one count that its requests renew (script.go).
	t  *Ticket
	id string
	// requests and tokens are what is left.
	requests, tokens int64
	// at are the rates' arrival times (Redis's clock) as this replica's own admissions leave
	// them, for the headers; redisNow is Redis's clock at the grant (ms) and skew Redis's clock
	// less this replica's.
	at             arrivals
	redisNow, skew float64
	until          time.Time
}

// allowanceKey names a client's allowance: its counters and the limits it was granted under.
type allowanceKey struct {
	key    string
	limits routingv1.Limits
}

func keyOf(t *Ticket) allowanceKey { return allowanceKey{t.key, t.limits} }

// tokenLimited says the client has a limit on tokens, which an allowance's tokens then bound.
func tokenLimited(l routingv1.Limits) bool {
	return l.TokensPerMinute > 0 || l.TokensPerDay > 0 || l.TokensPerMonth > 0
}

// fromAllowance admits t from its client's allowance when there is one that covers it (same
// periods, a request and its tokens left, not expired); an allowance that cannot is given back.
func (s *redisStore) fromAllowance(t *Ticket, now time.Time) (Verdict, bool) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	a := s.b.allowances[keyOf(t)]
	if a == nil {
		return Verdict{}, false
	}
	tokens := tokenLimited(t.limits)
	if now.After(a.until) || a.t.day.id != t.day.id || a.t.month.id != t.month.id {
		s.giveBackLocked(a)
		return Verdict{}, false
	}
	if a.requests < 1 || (tokens && a.tokens < t.reserved) {
		s.giveBackLocked(a)
		s.b.spent[keyOf(t)] = now // its requests keep coming: the next call asks again
		return Verdict{}, false
	}
	if t.leased() {
		t.grant = a.id
	}
	a.requests--
	if tokens {
		a.tokens -= t.reserved
	}
	return a.at.admit(t.limits, t.reserved, millis(now)+a.skew), true
}

// wantsAllowance says a call of n admissions of t's client should ask for an allowance: the
// client has none, and its requests arrive together (two or more in the call) or used up its
// last one within allowanceLife.
func (b *batcher) wantsAllowance(t *Ticket, n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := keyOf(t)
	if b.allowances[k] != nil {
		return false
	}
	spent, ok := b.spent[k]
	delete(b.spent, k)
	return n >= 2 || (ok && time.Since(spent) < allowanceLife)
}

// grant makes a call's granted allowance the client's, for allowanceLife from now; one it
// replaces is given back.
func (s *redisStore) grant(a *allowance) {
	now := time.Now()
	a.skew, a.until = a.redisNow-millis(now), now.Add(allowanceLife)
	s.b.mu.Lock()
	if old := s.b.allowances[keyOf(a.t)]; old != nil {
		s.giveBackLocked(old)
	}
	s.b.allowances[keyOf(a.t)] = a
	s.b.mu.Unlock()
	time.AfterFunc(allowanceLife, func() {
		s.b.mu.Lock()
		if s.b.allowances[keyOf(a.t)] == a {
			s.giveBackLocked(a)
		}
		s.b.mu.Unlock()
		s.poke()
	})
}

// chargeAllowanceLocked moves the tokens' arrival time of t's client's allowance by what its
// request used beyond its reservation (b.mu held), so that the headers of its next admissions
// show the debt; an allowance whose client is a minute or more in debt is given back, and its
// next requests are decided in Redis.
func (s *redisStore) chargeAllowanceLocked(t *Ticket, used int64) {
	a := s.b.allowances[keyOf(t)]
	if a == nil || t.limits.TokensPerMinute <= 0 || used <= t.reserved {
		return
	}
	now := millis(time.Now()) + a.skew
	a.at.tokens = settleRate(a.at.tokens, now, float64(t.limits.TokensPerMinute), float64(used-t.reserved))
	if a.at.tokens-now > minute {
		s.giveBackLocked(a)
	}
}

// giveBackLocked queues what is left of a for the next call (b.mu held).
//
// Note: one used up is given back too: Redis then knows that its slots are only its requests in
// flight, and forgets it with the last of them.
func (s *redisStore) giveBackLocked(a *allowance) {
	delete(s.b.allowances, keyOf(a.t))
	s.b.refunds = append(s.b.refunds, a)
}

// giveBackAll sends what is left of every allowance (the store closes).
func (s *redisStore) giveBackAll() {
	s.b.mu.Lock()
	for _, a := range s.b.allowances {
		s.giveBackLocked(a)
	}
	refunds := s.b.refunds
	s.b.refunds = nil
	s.b.mu.Unlock()
	if len(refunds) > 0 {
		_ = s.send(nil, nil, refunds)
	}
}
