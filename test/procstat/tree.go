/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package procstat

import (
	"strings"

	"github.com/prometheus/procfs"
)

// Descendants lists every process below pid (children, theirs, and so on), by pid, with its
// command line, from /proc's parent links.
func Descendants(pid int) map[int]string {
	procs, _ := procfs.AllProcs()
	parent := map[int]int{}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			parent[p.PID] = st.PPID
		}
	}
	out := map[int]string{}
	for p := range parent {
		for q := parent[p]; q > 0; q = parent[q] {
			if q == pid {
				out[p] = Cmdline(p)
				break
			}
		}
	}
	return out
}

// Alive says whether pid still runs the command it ran before (a reused pid runs another).
func Alive(pid int, was string) bool {
	now := Cmdline(pid)
	return now != "" && now == was
}

// Cmdline is pid's command line, its arguments separated by spaces; empty when it is gone.
func Cmdline(pid int) string {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return ""
	}
	args, _ := p.CmdLine()
	return strings.Join(args, " ")
}
