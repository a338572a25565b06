/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file is the Redis store's batching: the admissions and settlements that arrive while a
// call to Redis is in flight go together in the next one, one pipelined round trip with one
// batchScript call per client. There is no timer: a lone request is sent at once, and under load
// a batch is whatever queued during the previous round trip (natural batching, as a database
// driver's group commit).
//
// Note: at 64 concurrent requests on two cores, one script call per request cost Redis more CPU
// than the proxy's whole hop (docs/limits.md, "What it costs"); a batch reads and writes each of a
// client's counters once, so Redis's work per request falls with the load.

// maxBatch is the most admissions (and, apart, settlements) one round trip carries; the rest go
// in the next at once.
const maxBatch = 256

// settleQueue bounds the settlements waiting (about 200 bytes each): a fuller queue makes
// Settle send its own, so memory never grows with a slow Redis.
const settleQueue = 4096

// settleDelay is how long the settlements of clients with an allowance may wait for a round
// trip to ride along with: far from every limit, a slot or a charge some milliseconds late
// changes no decision, and at 64 concurrent requests batches of settlements alone were the most
// round trips once allowances took the admissions (docs/limits.md, "What it costs"). A
// variable for the test that makes it long.
var settleDelay = 20 * time.Millisecond

// settlement is one request's charge, waiting for the next batch.
type settlement struct {
	t    *Ticket
	used int64
	// void says it refunds an admission whose round trip failed, which Redis may run later.
	void bool
}

// admission is one request waiting for its verdict.
type admission struct {
	t     *Ticket
	v     Verdict
	err   error
	done  chan struct{}
	state atomic.Int32
}

// An admission's state: its caller waits, was answered, or gave up waiting (its timeout).
const (
	waiting int32 = iota
	answered
	abandoned
)

// errTimeout is an admission's wait that outlasted the store's timeout.
var errTimeout = errors.New("the limits store did not answer within its timeout")

// batcher holds what waits for the next round trip.
type batcher struct {
	mu      sync.Mutex
	admits  []*admission
	settles []settlement
	// allowances are this replica's, by client (allowance.go); refunds what is left of the ones
	// given back, for the next round trip.
	allowances map[allowanceKey]*allowance
	refunds    []*allowance
	// spent is when a client's allowance was used up (wantsAllowance).
	spent map[allowanceKey]time.Time
	// urgent says a pending settlement should go at once: its client has no allowance (it may be
	// near a limit), or a batch's worth wait. later sends the others after settleDelay.
	urgent bool
	later  *time.Timer
	// inflight are the admitted requests whose leases this replica renews (renew.go), renews
	// the leases of the next round trip.
	inflight map[*Ticket]struct{}
	renews   []*Ticket
	// retrySettles and retryRefunds failed their round trip; retry puts them back in the queue.
	retrySettles []settlement
	retryRefunds []*allowance
	retry        *time.Timer
	// wake tells the loop that something is pending (capacity 1: one wake-up covers any number).
	wake chan struct{}
}

// admit queues t's admission and waits for its verdict, at most the store's timeout from now.
//
// Note: a caller that gives up is answered by its failure mode; the loop then skips its
// admission, or, when it was already sent and admitted, refunds it (a settlement of nothing), so
// a request that never went upstream holds neither tokens nor a concurrency slot. An admission
// whose round trip failed may have been counted all the same (Redis ran the call, its answer was
// lost): it is refunded too, which changes nothing when Redis never counted it (its lease is not
// there).
func (s *redisStore) admit(t *Ticket, now time.Time) (Verdict, error) {
	if t.leased() {
		t.leaseEnd.Store(now.Add(lease).UnixNano())
	}
	if v, ok := s.fromAllowance(t, now); ok {
		s.track(t)
		return v, nil
	}
	a := &admission{t: t, done: make(chan struct{})}
	s.b.mu.Lock()
	s.b.admits = append(s.b.admits, a)
	s.b.mu.Unlock()
	s.poke()
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case <-a.done:
	case <-timer.C:
		if a.state.CompareAndSwap(waiting, abandoned) {
			return Verdict{}, errTimeout
		}
		<-a.done // answered as the timer fired
	}
	return a.v, a.err
}

// leaseName is a new lease's name: the replica's and a number, unique across replicas.
func (s *redisStore) leaseName() string {
	return s.replica[:10] + strconv.FormatUint(s.leases.Add(1), 36)
}

// settle queues the charge for the next batch (sends it alone when the queue is full); the
// request's lease is no longer renewed.
//
// Note: a settlement is not on the request's path: the answer is complete, and a keep-alive
// client's next request should not wait for a round trip to Redis. A request admitted right
// after another's answer may not yet see its charge (one round trip).
func (s *redisStore) settle(t *Ticket, used int64) error {
	return s.queue(settlement{t: t, used: used})
}

func (s *redisStore) queue(st settlement) error {
	t := st.t
	s.b.mu.Lock()
	delete(s.b.inflight, t)
	s.chargeAllowanceLocked(t, st.used)
	if len(s.b.settles) >= settleQueue {
		s.b.mu.Unlock()
		err := s.send(nil, []settlement{st}, nil)
		if err == nil {
			s.settled(1)
		}
		return err
	}
	s.b.settles = append(s.b.settles, st)
	if s.b.allowances[keyOf(t)] == nil || len(s.b.settles) >= maxBatch {
		s.b.urgent = true
	}
	urgent, first := s.b.urgent, len(s.b.settles) == 1
	s.b.mu.Unlock()
	if urgent {
		s.poke()
	} else if first {
		s.b.later.Reset(settleDelay)
	}
	return nil
}

// forget stops renewing t's lease: its request ended with nothing to settle, and its lease ends
// by itself.
func (s *redisStore) forget(t *Ticket) {
	s.b.mu.Lock()
	delete(s.b.inflight, t)
	s.b.mu.Unlock()
}

// track renews t's lease from now on, until its request ends.
func (s *redisStore) track(t *Ticket) {
	if t.lease == "" && t.grant == "" {
		return
	}
	s.b.mu.Lock()
	s.b.inflight[t] = struct{}{}
	s.b.mu.Unlock()
}

// retryLater queues settlements and allowances given back whose round trip failed for another
// try after retryStoreAfter, as long as their lease lives: once it ended, Redis freed the
// request's slot by itself, and a settlement would change nothing.
func (s *redisStore) retryLater(settles []settlement, refunds []*allowance) {
	now := time.Now()
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	for _, st := range settles {
		if st.t.leaseLive(now) {
			s.b.retrySettles = append(s.b.retrySettles, st)
		}
	}
	for _, r := range refunds {
		if now.Before(r.until.Add(lease)) {
			s.b.retryRefunds = append(s.b.retryRefunds, r)
		}
	}
	if len(s.b.retrySettles)+len(s.b.retryRefunds) > 0 {
		s.b.retry.Reset(retryStoreAfter)
	}
}

// retryNow puts the settlements and allowances of retryLater back in the queue.
func (s *redisStore) retryNow() {
	s.b.mu.Lock()
	s.b.settles = append(s.b.retrySettles, s.b.settles...)
	s.b.refunds = append(s.b.retryRefunds, s.b.refunds...)
	s.b.retrySettles, s.b.retryRefunds = nil, nil
	s.b.urgent = len(s.b.settles)+len(s.b.refunds) > 0
	s.b.mu.Unlock()
	s.poke()
}

func (s *redisStore) poke() {
	select {
	case s.b.wake <- struct{}{}:
	default:
	}
}

// take is what the next round trip carries, at most maxBatch of admissions and of settlements,
// the allowances given back and the leases to renew.
func (b *batcher) take() ([]*admission, []settlement, []*allowance, []*Ticket) {
	b.mu.Lock()
	defer b.mu.Unlock()
	renews := b.renews
	b.renews = nil
	n, m := min(len(b.admits), maxBatch), min(len(b.settles), maxBatch)
	if n == 0 && len(b.refunds) == 0 && len(renews) == 0 && !b.urgent {
		m = 0 // they wait for an admission's round trip, or for later
	}
	b.urgent = len(b.settles) > m && b.urgent
	admits, settles, refunds := b.admits[:n:n], b.settles[:m:m], b.refunds
	b.admits, b.settles, b.refunds = b.admits[n:], b.settles[m:], nil
	if len(b.admits) == 0 {
		b.admits = nil
	}
	if len(b.settles) == 0 {
		b.settles = nil
	}
	return admits, settles, refunds, renews
}

// loop sends what is pending, one round trip at a time, until the store closes.
func (s *redisStore) loop() {
	for {
		select {
		case <-s.done:
			return
		case <-s.b.wake:
		}
		for {
			admits, settles, refunds, renews := s.b.take()
			if len(admits)+len(settles)+len(refunds)+len(renews) == 0 {
				break
			}
			live := admits[:0:0]
			for _, a := range admits {
				if a.state.Load() == waiting {
					live = append(live, a)
				}
			}
			if err := s.send(live, settles, refunds, renews...); err != nil {
				s.failed(err)
			} else if len(settles) > 0 {
				s.settled(len(settles))
			}
		}
	}
}

// send runs one batch in one pipelined round trip, answers its admissions and makes the
// allowances it granted this replica's; its error is the settlements' and refunds' (a failed
// call's admissions get their own error), which are tried again later (retryLater). A Redis that
// lost its scripts (a restart) gets them loaded again and the batch once more.
//
// Note: a client's call asks for an allowance when it carries two admissions or more (its
// requests arrive together), or its last allowance was used up, and the client has none: a lone
// request, or one near a limit, is decided in Redis as before.
func (s *redisStore) send(admits []*admission, settles []settlement, refunds []*allowance, renews ...*Ticket) error {
	for _, a := range admits {
		if a.t.leased() && a.t.lease == "" {
			a.t.lease = s.leaseName()
		}
	}
	calls := groupCalls(admits, settles, refunds, renews...)
	for _, c := range calls {
		if len(c.admits) > 0 && s.b.wantsAllowance(c.admits[0].t, len(c.admits)) {
			c.ask, c.askID = maxAllowance, s.leaseName()
		}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	// Encoded once: encode sums into the calls' counters, so a second run (NOSCRIPT) must send
	// the same arguments, not add the batch twice.
	keys, args := make([][]string, len(calls)), make([][]any, len(calls))
	for i, c := range calls {
		keys[i], args[i] = c.encode()
	}
	var cmds []*redis.Cmd
	run := func() error {
		pipe := s.c.Pipeline()
		cmds = cmds[:0]
		for i := range calls {
			cmds = append(cmds, batchScript.EvalSha(ctx, pipe, keys[i], args[i]...))
		}
		_, err := pipe.Exec(ctx)
		return err
	}
	err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if err = batchScript.Load(ctx, s.c).Err(); err == nil {
			err = run()
		}
	}
	var settleErr error
	var failedSettles []settlement
	var failedRefunds []*allowance
	for i, c := range calls {
		vs, cerr := c.answers(cmds[i]) // a failed pipeline sets its error on every call
		if cerr != nil && len(c.settles)+len(c.refunds) > 0 {
			settleErr = cerr
			failedSettles, failedRefunds = append(failedSettles, c.settles...), append(failedRefunds, c.refunds...)
		}
		if cerr == nil {
			for _, t := range c.renews {
				t.leaseEnd.Store(start.Add(lease).UnixNano())
			}
		}
		if cerr == nil && c.granted != nil {
			s.grant(c.granted)
		}
		for j, a := range c.admits {
			if cerr != nil {
				a.err = cerr
			} else {
				a.v = vs[j]
			}
			s.answer(a)
		}
	}
	if settleErr != nil {
		s.retryLater(failedSettles, failedRefunds)
	}
	return settleErr
}

// answer wakes a's caller, or, when it gave up meanwhile and was admitted, refunds it. An
// admission whose round trip failed is refunded too: Redis may have counted it.
func (s *redisStore) answer(a *admission) {
	admitted := a.err == nil && a.v.Allowed
	if a.state.CompareAndSwap(waiting, answered) {
		if admitted {
			s.track(a.t)
		}
		close(a.done)
		if a.err == nil {
			return
		}
	} else if !admitted && a.err == nil {
		return
	}
	if a.t.lease != "" {
		_ = s.queue(settlement{t: a.t, void: a.err != nil})
	}
}
