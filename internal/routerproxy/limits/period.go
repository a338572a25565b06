/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"sync/atomic"
	"time"
)

// period is one quota period: its id (a key part) and its end.
type period struct {
	id  string
	end time.Time
}

// day is the UTC day of now; it renews at 00:00 UTC.
func day(now time.Time) period {
	u := now.UTC()
	start := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return period{id: start.Format("20060102"), end: start.AddDate(0, 0, 1)}
}

// month is the calendar month of now in UTC; it renews at 00:00 UTC on the 1st.
func month(now time.Time) period {
	u := now.UTC()
	start := time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
	return period{id: start.Format("200601"), end: start.AddDate(0, 1, 0)}
}

// periods are the day and the month of now.
//
// Note: every admission needs them, and time.Date and Format cost more than the rest of a
// ticket; the last answer is kept for the rest of its day.
func periods(now time.Time) (period, period) {
	if c := lastPeriods.Load(); c != nil && !now.Before(c.start) && now.Before(c.day.end) {
		return c.day, c.month
	}
	c := &dayAndMonth{day: day(now), month: month(now)}
	c.start = c.day.end.AddDate(0, 0, -1)
	lastPeriods.Store(c)
	return c.day, c.month
}

type dayAndMonth struct {
	start      time.Time
	day, month period
}

var lastPeriods atomic.Pointer[dayAndMonth]
