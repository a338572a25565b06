/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

// minute is the period of every rate, in milliseconds.
const minute = 60_000.0

// gcra decides a rate of limit per minute for a request costing cost, given the stored
// theoretical arrival time tat and now (milliseconds). It returns whether the request fits, the
// new tat to store when it does, how long until it would fit when it does not, and the window as
// the headers show it.
//
// Note: the Redis script (redis.go) is this function in Lua; change both together
// (TestMemoryAndRedisAgree runs both on the same sequence).
func gcra(tat, now, limit, cost float64) (ok bool, newTAT, retry float64, w Window) {
	interval := minute / limit
	tat = max(tat, now)
	next := tat + cost*interval
	w = Window{Set: true, Limit: int64(limit)}
	if next-now > minute {
		w.Remaining, w.Reset = remaining(tat, now, interval), ms(tat-now)
		return false, tat, next - minute - now, w
	}
	w.Remaining, w.Reset = remaining(next, now, interval), ms(next-now)
	return true, next, 0, w
}

// settleRate moves tat by the difference between what was charged and what was reserved: a
// refund never moves it before now, a debt may carry it past a whole minute (the next requests
// wait it out).
func settleRate(tat, now, limit, delta float64) float64 {
	return max(max(tat, now)+delta*minute/limit, now)
}

func remaining(tat, now, interval float64) int64 { return int64((minute - (tat - now)) / interval) }
