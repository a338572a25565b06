/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"sync/atomic"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Ticket is one admitted request, kept to settle it: what it reserved and in which periods.
//
// Note: a request's tokens are charged to the periods it was admitted in, also when its answer
// ends after midnight: the reservation and the charge then meet in one counter.
type Ticket struct {
	// key is the client's part of every counter's name: the router's prefix and the client,
	// in a Redis hash tag so that a cluster keeps one client's counters on one slot.
	key      string
	limits   routingv1.Limits
	reserved int64
	day      period
	month    period
	// held says the ticket counts toward the concurrent requests and must be released.
	held bool
	// lease names the request's lease in Redis (script.go), empty when it has none (its client
	// has neither a concurrency nor a token limit, or the store is memory); leaseEnd is when
	// it ends (Unix ns, this replica's clock) unless renewed: a settlement that failed is
	// retried until then.
	lease    string
	leaseEnd atomic.Int64
	// grant names the allowance the request was admitted from (allowance.go): its slot and the
	// count of its settlement are the allowance's, not a lease of its own.
	grant string
}

// store counts limits: memory (one replica) or Redis (all of them).
type store interface {
	// admit decides t's request and, when it passes, reserves its tokens and its concurrency.
	admit(t *Ticket, now time.Time) (Verdict, error)
	// settle charges used tokens against what t reserved and releases its concurrency.
	settle(t *Ticket, used int64) error
	// forget says t's request ended with nothing to settle.
	forget(t *Ticket)
	close() error
}

func newTicket(prefix string, c *routingv1.Client, reserve int64, now time.Time) *Ticket {
	d, m := periods(now)
	return &Ticket{
		key:      "{" + prefix + "/" + c.Name + "}",
		limits:   *c.Limits,
		reserved: reserve,
		day:      d,
		month:    m,
		held:     c.Limits.ConcurrentRequests > 0,
	}
}

// Reserved is the tokens the request reserved: what it is charged when nothing was metered.
func (t *Ticket) Reserved() int64 { return t.reserved }

// settles says a charge of used changes a counter: the ticket holds a concurrency slot, or it
// has a token limit and used differs from what it reserved.
func (t *Ticket) settles(used int64) bool {
	return t.held || (used != t.reserved && tokenLimited(t.limits))
}

func (t *Ticket) rpmKey() string    { return t.key + ":rpm" }
func (t *Ticket) tpmKey() string    { return t.key + ":tpm" }
func (t *Ticket) dayKey() string    { return t.key + ":day:" + t.day.id }
func (t *Ticket) monthKey() string  { return t.key + ":month:" + t.month.id }
func (t *Ticket) leasesKey() string { return t.key + ":leases" }
func (t *Ticket) grantsKey() string { return t.key + ":allowances" }
func (t *Ticket) voidKey() string   { return t.key + ":void" }

// leased says t's request gets a lease in Redis: it holds a concurrency slot, or its settlement
// charges tokens, which the lease makes count once.
func (t *Ticket) leased() bool { return t.held || tokenLimited(t.limits) }

// leaseLive says t's lease has not ended by this replica's clock.
func (t *Ticket) leaseLive(now time.Time) bool { return now.UnixNano() < t.leaseEnd.Load() }

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func millis(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }
