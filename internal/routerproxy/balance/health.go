/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"sync/atomic"
	"time"
)

// Health is the run of failures of one thing the proxy sends to: a pod (Endpoint) or a backend
// without pods (an external API, a Service URL). After Threshold failures in a row it cools down
// for a while: requests skip it unless it is their last option. It is the proxy's one health
// tracker; what counts as a failure is decided in one place (routerproxy's verdict).
type Health struct {
	fails atomic.Int32
	until atomic.Int64 // unix nanoseconds the cooldown ends
}

// Cooling reports whether h is in a cooldown at now.
func (h *Health) Cooling(now time.Time) bool { return now.UnixNano() < h.until.Load() }

// Failed records one failure; it reports whether this one started a cooldown.
func (h *Health) Failed(now time.Time, threshold int, cooldown time.Duration) bool {
	if n := h.fails.Add(1); int(n) >= max(threshold, 1) {
		h.fails.Store(0)
		h.until.Store(now.Add(cooldown).UnixNano())
		return true
	}
	return false
}

// Succeeded ends the run of failures.
func (h *Health) Succeeded() {
	if h.fails.Load() != 0 {
		h.fails.Store(0)
	}
}
