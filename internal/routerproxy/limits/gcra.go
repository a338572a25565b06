/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

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
