/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package procstat reads the machine's CPU time from /proc for the benchmarks, which report
// what a run cost the whole machine beside what each of its processes did.
package procstat

import (
	"time"

	"github.com/prometheus/procfs"
)

// Busy is the CPU time all cores have spent busy since boot, from /proc/stat: user, system and
// interrupts, not idle, iowait (a core waiting on the disk does no work) or steal (a virtual
// machine's core the host ran something else on). Niced user time counts only when niced is
// set: a benchmark that shares the machine with work run under nice leaves it out. Zero when
// /proc cannot be read.
func Busy(niced bool) time.Duration {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0
	}
	st, err := fs.Stat()
	if err != nil {
		return 0
	}
	t := st.CPUTotal
	busy := t.User + t.System + t.IRQ + t.SoftIRQ
	if niced {
		busy += t.Nice
	}
	return time.Duration(busy * float64(time.Second))
}
