/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import "time"

// This file renews the leases of the requests a replica has in flight (script.go): every third
// of a lease, one call per client carries the leases of all its requests still in flight. A
// request's lease is renewed only while its request runs: once it ended (settled, or forgotten
// with nothing to settle) it is no longer renewed, so a slot whose settlement never reached Redis
// frees itself one lease later, whatever else the replica sends.
//
// Note: a renewal adds a lease Redis lost (a restart without its file, FLUSHALL) back, so the
// requests in flight count again toward the concurrent requests by the next renewal.

// renewLoop queues the in-flight leases every lease/3 until the store closes.
func (s *redisStore) renewLoop() {
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		s.b.mu.Lock()
		s.b.renews = s.b.renews[:0]
		for t := range s.b.inflight {
			s.b.renews = append(s.b.renews, t)
		}
		n := len(s.b.renews)
		s.b.mu.Unlock()
		if n > 0 {
			s.poke()
		}
	}
}
