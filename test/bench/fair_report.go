/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FairMarkdown renders a fair run: every phase, the ratios per N with their spread, CPU per
// object, and the operator's requests per object.
func FairMarkdown(r *FairResult) string {
	var b strings.Builder
	o := r.Options
	fmt.Fprintf(&b, "Machine: %s; load average (1, 5, 15 min) at start → end: %s; took %s.\n\n", r.Machine, r.Load, r.Took)
	fmt.Fprintf(&b, "Operator process: %s --cache-transform=%s; %d workers create the objects (and write them, for the floors).\n\n", o.Settings, o.CacheTransform, o.Workers)
	b.WriteString("Every phase runs on its own fresh control plane (kube-apiserver and etcd), warmed up with 20 objects and left to quiet down first, so that no phase runs on a store another one has grown; the order alternates per repeat and is in the # column. " +
		"floor: a bare client, as the operator's user and without a client-side limit, writes what the operator writes. floor+watches: the same floor while an idle cache of the operator's kinds, with its cache options, watches the namespace. " +
		"operator: the operator binary converging the same objects, until the benchmark's watch sees every object converged (seen converged: the floors timed that way too). CPU from /proc/<pid>/stat over each phase's window; etcd's database size at its end.\n\n")
	b.WriteString("| N | repeat | # | phase | converge | seen converged | per object | API server CPU / object | etcd CPU / object | operator CPU / object | benchmark CPU / object | machine busy | etcd db total (in use) | API server idle before | load (1 min) | operator RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		n := time.Duration(run.N)
		for i, p := range run.Phases {
			op, rss, seen := "-", "-", p.Seen.String()
			if p.Name == PhaseOperator {
				op, rss, seen = fmtDur(time.Duration(p.CPU.Operator)/n), mib(p.RSS), p.Took.String()
			}
			load, _, _ := strings.Cut(p.Load, " ")
			fmt.Fprintf(&b, "| %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.2f cores | %s (%s) | %.2f cores | %s | %s |\n",
				run.N, run.Repeat, i+1, p.Name, p.Took, seen, fmtDur(time.Duration(p.Took)/n),
				fmtDur(time.Duration(p.CPU.APIServer)/n), fmtDur(time.Duration(p.CPU.Etcd)/n), op,
				fmtDur(time.Duration(p.CPU.Bench)/n), p.CPU.Cores(time.Duration(p.Took)),
				mib(p.DB.Total), mib(p.DB.InUse), p.IdleCores, load, rss)
		}
	}
	b.WriteString("\nRatios of the operator's convergence to each floor's, per repeat (order), and their spread:\n\n")
	b.WriteString("| N | operator / floor | min – max | operator / floor+watches | min – max | CPU per object, floor: API server / etcd | floor+watches: API server / etcd | operator: operator / API server / etcd |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Summaries {
		f, w, op := s.PerObject[PhaseFloor], s.PerObject[PhaseFloorWatches], s.PerObject[PhaseOperator]
		fmt.Fprintf(&b, "| %d | %s | %.2f – %.2f | %s | %.2f – %.2f | %s / %s | %s / %s | %s / %s / %s |\n",
			s.N, perRepeat(r, s.N, s.OverFloor), s.OverFloor.Min, s.OverFloor.Max,
			perRepeat(r, s.N, s.OverFloorWatches), s.OverFloorWatches.Min, s.OverFloorWatches.Max,
			f.APIServer, f.Etcd, w.APIServer, w.Etcd, op.Operator, op.APIServer, op.Etcd)
	}
	b.WriteString("\nWhere the CPU went, per object and phase (mean over the repeats): the processes the benchmark runs (API server, etcd, operator, the benchmark itself) and the cores the whole machine kept busy. When a phase keeps the cores busy, its time is its CPU divided by them, and the ratio of two phases' times follows the ratio of their CPU:\n\n")
	b.WriteString("| N | phase | API server | etcd | operator | benchmark | total | machine busy |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Summaries {
		for _, name := range []string{PhaseFloor, PhaseFloorWatches, PhaseOperator} {
			c, ok := s.PerObject[name]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %.2f cores |\n", s.N, name,
				fmtDur(time.Duration(c.APIServer)), fmtDur(time.Duration(c.Etcd)), fmtDur(time.Duration(c.Operator)),
				fmtDur(time.Duration(c.Bench)), fmtDur(c.Total()), s.Cores[name])
		}
	}
	for _, s := range r.Summaries {
		if s.APIServerDiff == "" {
			continue
		}
		fmt.Fprintf(&b, "\nWhere the API server spent more CPU for the operator than for the floor beside the same watches, N=%d (`go tool pprof -top -cum -diff_base %s %s`; every phase's own profile is beside it):\n\n```\n%s```\n",
			s.N, filepath.Base(s.APIServerDiffOf[0]), filepath.Base(s.APIServerDiffOf[1]), topLines(s.APIServerDiff, 30))
	}
	b.WriteString("\nThe operator's requests per object (API server's apiserver_request_total, without the benchmark's creates):\n\n")
	for _, run := range r.Runs {
		p := run.Phase(PhaseOperator)
		fmt.Fprintf(&b, "- N=%d repeat %d: %d reconciles; %s\n", run.N, run.Repeat, p.Reconciles, perObject(p.Requests, run.N))
	}
	writeLatency(&b, r)
	if p := r.Profile; p != nil {
		fmt.Fprintf(&b, "\nProfiled operator phase at N=%d (its own run, not in the ratios): converge %s, operator CPU %s, RSS %s.\n", o.ProfileN, p.Took, p.CPU.Operator, mib(p.RSS))
		if p.ProfileTop != "" {
			fmt.Fprintf(&b, "\nCPU (`%s`, `go tool pprof -top -cum`):\n\n```\n%s```\n", filepath.Base(p.Profile), topLines(p.ProfileTop, 30))
		}
		if p.AllocsTop != "" {
			fmt.Fprintf(&b, "\nAllocated bytes (`%s`, `go tool pprof -sample_index=alloc_space -top -cum`):\n\n```\n%s```\n", filepath.Base(p.Allocs), topLines(p.AllocsTop, 30))
		}
	}
	return b.String()
}

// perRepeat lists a spread's values with the order of the repeat each came from.
func perRepeat(r *FairResult, n int, s Spread) string {
	var parts []string
	i := 0
	for _, run := range r.Runs {
		if run.N != n || i >= len(s.Values) {
			continue
		}
		first := "floor first"
		if run.Order[0] == PhaseOperator {
			first = "operator first"
		}
		parts = append(parts, fmt.Sprintf("%.2f (%s)", s.Values[i], first))
		i++
	}
	return strings.Join(parts, ", ")
}

// perObject renders request counts divided by n.
func perObject(m map[string]int, n int) string {
	if len(m) == 0 {
		return "no requests"
	}
	var parts []string
	for _, k := range keys(m) {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(m[k])/float64(n)))
	}
	return strings.Join(parts, ", ")
}

// WriteFair writes fair.md and fair.json into dir.
func WriteFair(r *FairResult, dir string) error {
	command := r.Command
	if command == "" {
		command = "make bench-fair"
	}
	return writeReport(dir, "fair", "Fair benchmark", command, r, FairMarkdown(r))
}

// writeLatency is the API server's mean latency per verb and resource, phase beside phase, over
// every repeat of an N: whether the API server answers the operator's requests more slowly than
// the floor's, and what the operator's reads cost in time.
func writeLatency(b *strings.Builder, r *FairResult) {
	type key struct {
		n    int
		verb string
	}
	sum, count := map[key]map[string]float64{}, map[key]map[string]int{}
	var keys []key
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			for verb, l := range p.Latency {
				k := key{run.N, verb}
				if sum[k] == nil {
					sum[k], count[k] = map[string]float64{}, map[string]int{}
					keys = append(keys, k)
				}
				sum[k][p.Name] += float64(l.Mean) * float64(l.Requests)
				count[k][p.Name] += l.Requests
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.SortFunc(keys, func(a, c key) int { return cmp.Or(cmp.Compare(a.n, c.n), cmp.Compare(a.verb, c.verb)) })
	b.WriteString("\nThe API server's mean latency per request (its apiserver_request_duration_seconds over each phase, all repeats; requests in brackets; POST inferenceservices are the benchmark's creates):\n\n")
	b.WriteString("| N | verb and resource | floor | floor+watches | operator |\n|---|---|---|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(b, "| %d | %s |", k.n, k.verb)
		for _, ph := range []string{PhaseFloor, PhaseFloorWatches, PhaseOperator} {
			if n := count[k][ph]; n > 0 {
				fmt.Fprintf(b, " %s (%d) |", time.Duration(sum[k][ph]/float64(n)).Round(10*time.Microsecond), n)
			} else {
				b.WriteString(" - |")
			}
		}
		b.WriteString("\n")
	}
}
