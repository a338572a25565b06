/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import "time"

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
