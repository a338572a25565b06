/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package redisserver

import (
	"strconv"
	"strings"
)

// ScriptCalls is how many script calls (EVALSHA and EVAL) a Redis ran, read from the answer to
// INFO commandstats: the limits' tests and benchmark count round trips with it.
func ScriptCalls(commandstats string) int64 {
	var n int64
	for _, line := range strings.Split(commandstats, "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(line, cmd); ok {
				calls, _, _ := strings.Cut(rest, ",")
				v, _ := strconv.ParseInt(calls, 10, 64)
				n += v
			}
		}
	}
	return n
}
