/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Markdown renders a result as the tables docs/performance.md quotes.
func Markdown(r *Result) string {
	var b strings.Builder
	o := r.Options
	fmt.Fprintf(&b, "Machine: %s; load average (1, 5, 15 min) at start → end: %s. Operator: --kube-api-qps=%g --kube-api-burst=%d --max-concurrent-reconciles=%d --cache-transform=%s; %d steady rounds; %d removals.\n\n",
		r.Machine, r.Load, o.QPS, o.Burst, o.MaxConcurrentReconciles, o.CacheTransform, o.Rounds, o.Removals)
	processTables(&b, r)
	neighbourTable(&b, r)
	sweepTable(&b, r)
	fmt.Fprintf(&b, "The API server's background (nothing but the neighbour running): %.2f cores.\n\n", r.APIServerIdle)
	b.WriteString("In-process operator at the settings above (requests counted at its client), against the floor with the same client limit:\n\n")
	b.WriteString("| N | converge: operator | floor | ratio | per object (op / floor) | API server CPU per object (op / floor) | writes per object | no-op reconciles | requests per no-op reconcile (reads / writes) | read-modify-Update (reads / writes) | removal p50 / p99 | direct apply p50 / p99 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		_, w := split(run.ConvergeRequests)
		fmt.Fprintf(&b, "| %d | %s | %s | %.2f | %s / %s | %s / %s | %.2f | %d | %.2f / %.2f | %.2f / %.2f | %s / %s | %s / %s |\n",
			run.N, run.Operator, run.Floor, run.Ratio,
			fmtDur(time.Duration(run.Operator)/time.Duration(run.N)), fmtDur(time.Duration(run.Floor)/time.Duration(run.N)),
			fmtDur(time.Duration(run.OperatorCPU.APIServer)/time.Duration(run.N)), fmtDur(time.Duration(run.FloorCPU.APIServer)/time.Duration(run.N)),
			float64(w)/float64(run.N), run.SteadyReconciles, run.SteadyReads, run.SteadyWrites,
			run.UpdateReads, run.UpdateWrites, run.RemovalP50, run.RemovalP99, run.ApplyP50, run.ApplyP99)
	}
	if m := r.Memory; m != nil {
		fmt.Fprintf(&b, "\nMemory at N=%d: informer cache of the operator's kinds, heap by transform:", m.N)
		for _, t := range []string{"none", "safe", "strip-all-managed-fields"} {
			fmt.Fprintf(&b, " %s %s;", t, mib(m.CacheHeap[t]))
		}
		b.WriteString("\n")
		for _, c := range m.Process {
			fmt.Fprintf(&b, "\nOperator binary as its own process at N=%d, --cache-transform=%s, quiet after %d reconciles: RSS %s (heap in use %s, not after a forced GC).\n",
				m.N, c.CacheTransform, c.Reconciles, mib(c.RSS), mib(c.HeapInuse))
		}
		if u := m.Unrelated; u != nil {
			fmt.Fprintf(&b, "\nBeside %d Deployments and %d ConfigMaps not the operator's, in its namespace: RSS %s without, %s with (ratio %.3f); RSS per InferenceService %.1f KiB.\n",
				u.Deployments, u.ConfigMaps, mib(u.Without.RSS), mib(u.With.RSS), u.Ratio, float64(u.PerOwned)/1024)
		}
	}
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "\nN=%d requests: converge %v; steady %v; read-modify-Update %v\n", run.N, fmtMap(run.ConvergeRequests), fmtMap(run.SteadyRequests), fmtMap(run.UpdateRequests))
	}
	return b.String()
}

// processTables renders the operator process's measurements, when there are any.
func processTables(b *strings.Builder, r *Result) {
	var runs []Run
	for _, run := range r.Runs {
		if run.Process != nil {
			runs = append(runs, run)
		}
	}
	if len(runs) > 0 {
		p := runs[0].Process
		fmt.Fprintf(b, "Operator binary as its own process (%s), as a service account (API Priority and Fairness level workload-low), against the unthrottled floor run right before it as the same user; CPU from /proc/<pid>/stat of the operator, kube-apiserver and etcd over the same window:\n\n", p.Settings)
		b.WriteString("| N | floor unthrottled | operator | ratio | per object (op / floor) | reconciles per object | writes per object | CPU per object: operator / API server / etcd | floor: API server / etcd CPU per object | operator / API server CPU | no-op reconcile: CPU, requests | restart: took, reconciles, requests, operator CPU / API server CPU | RSS after restart |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, run := range runs {
			p := run.Process
			n := time.Duration(run.N)
			rs := p.Restart
			fmt.Fprintf(b, "| %d | %s | %s | %.2f | %s / %s | %.2f | %.2f | %s / %s / %s | %s / %s | %.2f | %s, %d | %s, %d, %d, %s / %s | %s |\n",
				run.N, run.FloorUnthrottled, p.Converge, p.FloorRatio,
				fmtDur(time.Duration(p.Converge)/n), fmtDur(time.Duration(run.FloorUnthrottled)/n),
				float64(p.Reconciles)/float64(run.N), float64(writes(p.Requests))/float64(run.N),
				fmtDur(time.Duration(p.CPU.Operator)/n), fmtDur(time.Duration(p.CPU.APIServer)/n), fmtDur(time.Duration(p.CPU.Etcd)/n),
				fmtDur(time.Duration(run.FloorUnthrottledCPU.APIServer)/n), fmtDur(time.Duration(run.FloorUnthrottledCPU.Etcd)/n),
				ratio(p.CPU.Operator, p.CPU.APIServer),
				fmtDur(time.Duration(p.NoOpCPU.Operator)/time.Duration(max(p.NoOpReconciles, 1))), total(p.NoOpRequests),
				rs.Took, rs.Reconciles, total(rs.Requests), rs.CPU.Operator, rs.CPU.APIServer, mib(rs.RSS))
		}
		b.WriteString("\n")
		for _, run := range runs {
			p := run.Process
			fmt.Fprintf(b, "N=%d operator process requests: converge %s; no-op %s; restart %s\n\n", run.N, fmtMap(p.Requests), fmtMap(p.NoOpRequests), fmtMap(p.Restart.Requests))
			if m := p.Models; m != nil {
				fmt.Fprintf(b, "N=%d Model and InferenceService pairs: converge %s (%.2f Model status writes per Model); restart %d Model reconciles, requests %s\n\n",
					run.N, fmtMap(m.Converge.Requests), m.StatusWritesPerModel, m.Restart.Reconciles, fmtMap(m.Restart.Requests))
			}
		}
		for _, run := range runs {
			if p := run.Process; p.ProfileTop != "" {
				fmt.Fprintf(b, "CPU profile of the operator process converging N=%d (`%s`, `go tool pprof -top -cum`):\n\n```\n%s```\n\n", run.N, filepath.Base(p.Profile), topLines(p.ProfileTop, 30))
			}
		}
	}
	if u := r.Upgrade; u != nil {
		n := time.Duration(u.N)
		fmt.Fprintf(b, "Upgrade: %d InferenceServices whose Deployment and Service the records-based operator wrote (Update under `manager`, record annotations; every tenth records a key the spec no longer sets), taken over by the operator process at the settings above: %s, %d reconciles, requests %s (%.2f writes per object), pod templates changed %d (recorded keys dropped %d), CPU operator %s / API server %s per object.\n\n",
			u.N, u.Took, u.Reconciles, fmtMap(u.Requests), float64(writes(u.Requests))/float64(u.N), u.Rolled, u.Dropped,
			fmtDur(time.Duration(u.CPU.Operator)/n), fmtDur(time.Duration(u.CPU.APIServer)/n))
	}
	if rt := r.Routers; rt != nil {
		n := time.Duration(rt.N)
		fmt.Fprintf(b, "Routers: %d ModelRouters with two InferenceService backends each, converged in %s with %d reconciles and requests %s (%.2f writes per router), CPU operator %s / API server %s per router; a no-op reconcile of each: %d reconciles, requests %s, operator CPU %s per reconcile.\n\n",
			rt.N, rt.Converge.Took, rt.Converge.Reconciles, fmtMap(rt.Converge.Requests), float64(writes(rt.Converge.Requests))/float64(rt.N),
			fmtDur(time.Duration(rt.Converge.CPU.Operator)/n), fmtDur(time.Duration(rt.Converge.CPU.APIServer)/n),
			rt.NoOp.Reconciles, fmtMap(rt.NoOp.Requests), fmtDur(time.Duration(rt.NoOp.CPU.Operator)/time.Duration(max(rt.NoOp.Reconciles, 1))))
	}
}

// neighbourTable renders what another tenant's reads took while each convergence ran.
func neighbourTable(b *strings.Builder, r *Result) {
	if r.NeighbourIdle.Samples == 0 {
		return
	}
	fmt.Fprintf(b, "A neighbour on the same API server (an ordinary user, API Priority and Fairness level global-default; one GET of a ConfigMap every 50 ms), read latency p50 / p99 / max; idle: %s.\n\n", fmtNeighbour(r.NeighbourIdle))
	b.WriteString("| N | floor (client limit) | floor unthrottled | operator (settings above) | operator process unthrottled |\n|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		proc := "-"
		if run.Process != nil {
			proc = fmtNeighbour(run.Process.Neighbour)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", run.N, fmtNeighbour(run.NeighbourFloor), fmtNeighbour(run.NeighbourFloorUnthrottled), fmtNeighbour(run.NeighbourOperator), proc)
	}
	b.WriteString("\n")
}

// sweepTable renders the operator process's convergence with other Settings.
func sweepTable(b *strings.Builder, r *Result) {
	for _, run := range r.Runs {
		if len(run.Sweep) == 0 {
			continue
		}
		fmt.Fprintf(b, "Knobs: the operator process converging N=%d with each setting (unthrottled floor %s):\n\n", run.N, run.FloorUnthrottled)
		b.WriteString("| Settings | converge | ratio to unthrottled floor | operator CPU per object | API server CPU per object | neighbour p50 / p99 / max |\n|---|---|---|---|---|---|\n")
		for _, p := range append([]ProcessRun{*run.Process}, run.Sweep...) {
			n := time.Duration(run.N)
			fmt.Fprintf(b, "| %s | %s | %.2f | %s | %s | %s |\n", p.Settings, p.Converge, p.FloorRatio,
				fmtDur(time.Duration(p.CPU.Operator)/n), fmtDur(time.Duration(p.CPU.APIServer)/n), fmtNeighbour(p.Neighbour))
		}
		b.WriteString("\n")
	}
}

func fmtNeighbour(n Neighbour) string {
	if n.Samples == 0 {
		return "-"
	}
	return fmt.Sprintf("%s / %s / %s", n.P50, n.P99, n.Max)
}

func ratio(a, b jsonDuration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func total(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

func topLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}

func fmtMap(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range keys(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Write writes bench.md and bench.json into dir.
func Write(r *Result, dir string) error {
	return writeReport(dir, "bench", "Benchmark", "make bench", r, Markdown(r))
}

// writeReport writes result as NAME.json and markdown, under a title and the command that
// reproduces it, as NAME.md into dir: the one layout every report of this package has.
func writeReport(dir, name, title, command string, result any, markdown string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(result, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	md := "# " + title + "\n\nReproduce: `" + command + "`.\n\n" + markdown
	return os.WriteFile(filepath.Join(dir, name+".md"), []byte(md), 0o644)
}
