/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"fmt"
	"slices"
	"time"
)

// Tail says where the slowest requests of a round (those whose time to first token is at least
// the p99) spent that time, so that a p99 can be explained rather than only compared.
//
// Note: a first token is the end of a queue wait (arrival to the admission that prefilled it) and
// of a prefill (the blocks not cached); a tail made of queue waits behind long prefills asks for a
// different remedy (spread the long work) than one made of the long prompts' own prefill (which no
// placement shortens), or one piled on a single pod (herding after a read).
type Tail struct {
	Requests int
	// Long are the tail's requests of LongPrompt blocks or more.
	Long int
	// Wait and Prefill are the tail's means.
	Wait, Prefill time.Duration
	// PerPod is the tail's requests by the pod that served them.
	PerPod []int
}

func tailOf(firsts []*job, p99 time.Duration, pods []*enginePod, long int) Tail {
	t := Tail{PerPod: make([]int, len(pods))}
	var wait, prefill time.Duration
	for _, j := range firsts {
		if j.firstToken-j.arrived < p99 {
			continue
		}
		t.Requests++
		if len(j.req.kv) >= max(long, 1) {
			t.Long++
		}
		wait += j.admitted - j.arrived
		prefill += j.prefill
		t.PerPod[slices.Index(pods, j.pod)]++
	}
	if t.Requests > 0 {
		t.Wait, t.Prefill = wait/time.Duration(t.Requests), prefill/time.Duration(t.Requests)
	}
	return t
}

// String is the tail in one table cell.
func (t Tail) String() string {
	return fmt.Sprintf("%d (%d long): wait %.0f ms, prefill %.0f ms, by pod %v", t.Requests, t.Long,
		float64(t.Wait)/float64(time.Millisecond), float64(t.Prefill)/float64(time.Millisecond), t.PerPod)
}
