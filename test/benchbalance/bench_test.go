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
	o := Options{Pods: 3, Slots: 2, Miss: 4 * time.Millisecond, Hit: time.Millisecond, CacheSize: 4, Prefixes: 16, ZipfS: 1.1,
		Rate: 200, Duration: 300 * time.Millisecond, Drain: 5 * time.Second, Seed: 1, LoadFactor: 1.25}
	sc := []Scenario{{Name: "equal", SlowFactor: 1}}
	res, err := Run(context.Background(), o, sc[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		served := 0
		for _, n := range r.PerPod {
			served += n
		}
		if r.Requests == 0 || served != r.Requests || r.Unfinished != 0 {
			t.Errorf("%s: %d requests, %d served by pods, %d unfinished", r.Policy, r.Requests, served, r.Unfinished)
		}
		if r.Requests != res[0].Requests {
			t.Errorf("%s saw %d arrivals, %s %d: the arrival sequence differs", r.Policy, r.Requests, res[0].Policy, res[0].Requests)
		}
	}
	md := Markdown(o, sc, [][]Result{res}, "0 0 0", "0 0 0", "test")
	for _, p := range Policies {
		if !strings.Contains(md, "| "+string(p)+" |") {
			t.Errorf("no row for %s:\n%s", p, md)
		}
	}
}
