/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"sync"
	"time"
)

// memory counts limits in this replica alone: with N replicas, up to N times each limit passes
// (the router's LimitsShared condition says so).
type memory struct {
	mu      sync.Mutex
	clients map[string]*counters
}

// counters are one client's state: the rates' theoretical arrival times (ms), the quota periods
// with their use, the requests in flight.
type counters struct {
	rpm, tpm           float64
	day, month         string
	dayUsed, monthUsed int64
	inFlight           int64
}

func newMemory() *memory { return &memory{clients: map[string]*counters{}} }

func (m *memory) admit(t *Ticket, now time.Time) (Verdict, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.clients[t.key]
	if c == nil {
		c = &counters{}
		m.clients[t.key] = c
	}
	if c.day != t.day.id {
		c.day, c.dayUsed = t.day.id, 0
	}
	if c.month != t.month.id {
		c.month, c.monthUsed = t.month.id, 0
	}
	l, at := t.limits, millis(now)
	v := Verdict{Allowed: true}
	refuse := func(limit string, retry float64) {
		if v.Allowed {
			v.Allowed, v.Refused, v.RetryAfter = false, limit, ms(retry)
		}
	}
	rpm, tpm := c.rpm, c.tpm
	if l.RequestsPerMinute > 0 {
		ok, next, retry := gcra(c.rpm, at, float64(l.RequestsPerMinute), 1)
		rpm = next
		if !ok {
			refuse(LimitRequestsPerMinute, retry)
		}
	}
	if l.TokensPerMinute > 0 {
		ok, next, retry := gcra(c.tpm, at, float64(l.TokensPerMinute), float64(t.reserved))
		tpm = next
		if t.reserved > l.TokensPerMinute {
			refuse(LimitTokensPerMinute, 0)
			v.TooLarge = v.Refused == LimitTokensPerMinute
		} else if !ok {
			refuse(LimitTokensPerMinute, retry)
		}
	}
	if l.TokensPerDay > 0 && c.dayUsed+t.reserved > l.TokensPerDay {
		refuse(LimitTokensPerDay, millis(t.day.end)-at)
	}
	if l.TokensPerMonth > 0 && c.monthUsed+t.reserved > l.TokensPerMonth {
		refuse(LimitTokensPerMonth, millis(t.month.end)-at)
	}
	if l.ConcurrentRequests > 0 && c.inFlight >= l.ConcurrentRequests {
		refuse(LimitConcurrentRequests, 1000)
	}
	if v.Allowed {
		c.rpm, c.tpm = rpm, tpm
	}
	if l.RequestsPerMinute > 0 {
		v.Requests = window(c.rpm, at, float64(l.RequestsPerMinute))
	}
	if l.TokensPerMinute > 0 {
		v.Tokens = window(c.tpm, at, float64(l.TokensPerMinute))
	}
	if !v.Allowed {
		return v, nil
	}
	c.dayUsed += t.reserved
	c.monthUsed += t.reserved
	if t.held {
		c.inFlight++
	}
	return v, nil
}

func (m *memory) settle(t *Ticket, used int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.clients[t.key]
	if c == nil {
		return nil
	}
	delta := used - t.reserved
	if t.limits.TokensPerMinute > 0 && delta != 0 {
		c.tpm = settleRate(c.tpm, millis(time.Now()), float64(t.limits.TokensPerMinute), float64(delta))
	}
	if c.day == t.day.id {
		c.dayUsed += delta
	}
	if c.month == t.month.id {
		c.monthUsed += delta
	}
	if t.held {
		c.inFlight--
	}
	return nil
}

func (m *memory) forget(*Ticket) {}

func (m *memory) close() error { return nil }
