/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import routingv1 "github.com/llmkube/operator/api/routing/v1"

// minute is the period of every rate, in milliseconds.
const minute = 60_000.0

// gcra decides a rate of limit per minute for a request costing cost, given the stored
// theoretical arrival time tat and now (milliseconds). It returns whether the request fits, the
// tat to store when it does, and how long until it would fit when it does not.
//
// Note: the Redis script (redis.go) is this function in Lua; change both together
// (TestMemoryAndRedisAgree runs both on the same sequence).
func gcra(tat, now, limit, cost float64) (ok bool, next, retry float64) {
	next = max(tat, now) + cost*minute/limit
	if next-now > minute {
		return false, tat, next - minute - now
	}
	return true, next, 0
}

// window is a rate's state at tat, as the headers show it: what remains of the limit, and how
// long until it is whole again.
func window(tat, now, limit float64) Window {
	tat = max(tat, now)
	return Window{Set: true, Limit: int64(limit), Remaining: int64((minute - (tat - now)) / (minute / limit)), Reset: ms(tat - now)}
}

// settleRate moves tat by the difference between what was charged and what was reserved: a
// refund never moves it before now, a debt may carry it past a whole minute (the next requests
// wait it out).
func settleRate(tat, now, limit, delta float64) float64 {
	return max(max(tat, now)+delta*minute/limit, now)
}

// arrivals are a client's two rates' theoretical arrival times (ms) as its admissions leave
// them, where a store works out headers itself: the Redis script's fast path and an allowance.
type arrivals struct{ requests, tokens float64 }

// admit counts an admission of reserved tokens under l at now and is its verdict: allowed, with
// the windows it leaves (its headers). It decides nothing: the caller knows the admission fits.
func (a *arrivals) admit(l routingv1.Limits, reserved int64, now float64) Verdict {
	v := Verdict{Allowed: true}
	if l.RequestsPerMinute > 0 {
		rpm := float64(l.RequestsPerMinute)
		a.requests = max(a.requests, now) + minute/rpm
		v.Requests = window(a.requests, now, rpm)
	}
	if l.TokensPerMinute > 0 {
		tpm := float64(l.TokensPerMinute)
		a.tokens = max(a.tokens, now) + float64(reserved)*minute/tpm
		v.Tokens = window(a.tokens, now, tpm)
	}
	return v
}
