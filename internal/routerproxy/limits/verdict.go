/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// Limit names, as a refusal's message and the refusals metric name them.
const (
	LimitRequestsPerMinute  = "requests_per_minute"
	LimitTokensPerMinute    = "tokens_per_minute"
	LimitTokensPerDay       = "tokens_per_day"
	LimitTokensPerMonth     = "tokens_per_month"
	LimitConcurrentRequests = "concurrent_requests"
)

// allLimits are the limit label values, in the order the Redis script numbers them (1-based).
var allLimits = []string{LimitRequestsPerMinute, LimitTokensPerMinute, LimitTokensPerDay, LimitTokensPerMonth, LimitConcurrentRequests}

// Window is one rate's state after a decision, for OpenAI's x-ratelimit-* headers.
type Window struct {
	// Set says the client has this limit; no headers otherwise.
	Set       bool
	Limit     int64
	Remaining int64
	// Reset is how long until the limit is whole again.
	Reset time.Duration
}

// Verdict is the answer to one admission.
type Verdict struct {
	Allowed bool
	// Refused is the limit that refused (a Limit* name); empty when allowed.
	Refused string
	// TooLarge says the request alone needs more tokens than the limit allows: no wait helps.
	TooLarge bool
	// RetryAfter is when a refused request may pass.
	RetryAfter time.Duration
	// Unavailable says the store did not answer and the router fails closed.
	Unavailable bool
	Requests    Window
	Tokens      Window
}

// WriteHeaders sets OpenAI's rate-limit headers (x-ratelimit-limit-requests,
// -remaining-requests, -reset-requests and their -tokens counterparts) for the limits the client
// has, and on a refusal Retry-After (whole seconds, rounded up) and retry-after-ms, which the
// OpenAI SDKs read first.
//
// Note: the names are canonical constants set straight into the map, and the values share one
// allocation: the proxy writes these headers twice for every answer to a limited client (at
// admission, and over the backend's own on relay), where http.Header.Set's canonicalisation
// showed in the limits benchmark's profile.
func (v Verdict) WriteHeaders(h http.Header) {
	vals := make([]string, 0, 8)
	set := func(k, val string) {
		vals = append(vals, val)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	for _, w := range []struct {
		names *[3]string
		w     *Window
	}{{&requestHeaders, &v.Requests}, {&tokenHeaders, &v.Tokens}} {
		if !w.w.Set {
			continue
		}
		set(w.names[0], strconv.FormatInt(w.w.Limit, 10))
		set(w.names[1], strconv.FormatInt(max(w.w.Remaining, 0), 10))
		set(w.names[2], max(w.w.Reset, 0).Round(time.Millisecond).String())
	}
	if !v.Allowed && v.RetryAfter > 0 {
		set("Retry-After", strconv.FormatInt(int64(math.Ceil(v.RetryAfter.Seconds())), 10))
		set("Retry-After-Ms", strconv.FormatInt(max(v.RetryAfter.Milliseconds(), 1), 10))
	}
}

// The headers of each rate, in their canonical form: limit, remaining, reset.
var (
	requestHeaders = [3]string{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"}
	tokenHeaders   = [3]string{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"}
)
