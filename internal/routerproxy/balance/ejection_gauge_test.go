/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"testing"
	"time"
)

// What LLMKubeRouterBackendAllPodsEjected watches: 170 s in which both pods of a backend answer
// every request with a 500, behind a rule with a fallback (so an ejected pod is skipped, not
// tried as the last option), at 1 request every 2 s, with the proxy's defaults (3 failures in a
// row, a 30 s cooldown), scraped every 30 s. Each pod's cooldown ends by the clock and it is
// ejected again only after 3 new failures, so the scraped gauge of ejected pods dips below the
// pod count; the highest count of the last 2 minutes never does once both were ejected. The
// scrape sequence is the input of the alert's promtool test (test/monitoring/testdata/alerts).
func TestEjectionGaugeDipsAtEveryCooldownEnd(t *testing.T) {
	p := &Pool{Threshold: 3, Cooldown: 30 * time.Second}
	p.Update([]string{"10.0.0.1:8080", "10.0.0.2:8080"})
	start := time.Unix(0, 0)
	var scraped []int
	dipped, full := 0, false // seconds with fewer than 2 ejected after both were
	for ms := int64(0); ms <= 170_000; ms += 100 {
		now := start.Add(time.Duration(ms) * time.Millisecond)
		if ms%2000 == 0 { // a request, every pod it reaches answers 500
			if e := p.Pick(Request{}, now); e != nil {
				p.Failed(e, now)
			}
		}
		if ms%1000 != 0 {
			continue
		}
		n := 0
		for _, e := range p.Endpoints() {
			if e.Ejected(now) {
				n++
			}
		}
		full = full || n == 2
		if full && n < 2 {
			dipped++
		}
		if ms%30_000 == 15_000 { // a scrape, mid-way between two evaluations
			scraped = append(scraped, n)
		}
	}
	t.Logf("ejected pods at each scrape (every 30 s): %v; %d of 170 seconds below 2 after the first full ejection", scraped, dipped)
	for i := range scraped {
		// The highest of the scrapes in the 2 minutes up to this one (4 scrapes).
		highest := 0
		for _, m := range scraped[max(0, i-3) : i+1] {
			highest = max(highest, m)
		}
		if i > 0 && highest < 2 {
			t.Errorf("scrape %d: the highest count of the last 2 minutes is %d: the alert's window lost the ejection", i, highest)
		}
	}
	if dipped == 0 {
		t.Errorf("the gauge never dipped: the alert's 2-minute window would not be needed")
	}
}
