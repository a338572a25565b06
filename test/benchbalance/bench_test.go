/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A short run of every policy: it completes, counts every arrival once, and the report has a row
// per policy. It asserts no times (the machine is shared).
func TestSmoke(t *testing.T) {
	o := Options{Pods: 3, Slots: 2, Hit: time.Millisecond, Prefill: 100 * time.Microsecond, CacheBlocks: 64, Prefixes: 16, PromptBlocks: 8, ZipfS: 1.1,
		SystemPrompts: 2, SystemBytes: 1024, Users: 8, Turns: 4,
		Rate: 200, Duration: 300 * time.Millisecond, Drain: 5 * time.Second, Seed: 1, LoadFactor: 1.25}
	sc := []Scenario{{Name: "equal", SlowFactor: 1, Workload: Popular}, {Name: "conversations", SlowFactor: 1, Workload: Conversations}}
	for i := range sc {
		res, err := Run(context.Background(), o, sc[i])
		if err != nil {
			t.Fatal(err)
		}
		check(t, res)
		if i == 0 {
			md := Markdown(o, sc[:1], [][]Result{res}, "0 0 0", "0 0 0", "test")
			for _, p := range Policies {
				if !strings.Contains(md, "| "+string(p)+" |") {
					t.Errorf("no row for %s:\n%s", p, md)
				}
			}
		}
	}
}

// check: every arrival counted once, by every policy, and a cache-hit ratio strictly between 0 and 1.
func check(t *testing.T, res []Result) {
	t.Helper()
	for _, r := range res {
		served := 0
		for _, n := range r.PerPod {
			served += n
		}
		if r.Requests == 0 || served != r.Requests || r.Unfinished != 0 {
			t.Errorf("%s: %d requests, %d served by pods, %d unfinished", r.Policy, r.Requests, served, r.Unfinished)
		}
		if r.HitRatio <= 0 || r.HitRatio >= 1 {
			t.Errorf("%s: cache-hit ratio %.2f", r.Policy, r.HitRatio)
		}
		if r.Requests != res[0].Requests {
			t.Errorf("%s saw %d arrivals, %s %d: the arrival sequence differs", r.Policy, r.Requests, res[0].Policy, res[0].Requests)
		}
	}
}
