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

// Markdown renders a result as the tables the README quotes.
func Markdown(r *Result) string {
	var b strings.Builder
	o := r.Options
	fmt.Fprintf(&b, "Machine: %s. Operator: --kube-api-qps=%g --kube-api-burst=%d --max-concurrent-reconciles=%d --cache-transform=%s; %d steady rounds; %d removals.\n\n",
		r.Machine, o.QPS, o.Burst, o.MaxConcurrentReconciles, o.CacheTransform, o.Rounds, o.Removals)
	b.WriteString("| N | converge: operator | floor | ratio | per object (op / floor) | writes per object | no-op reconciles | requests per no-op reconcile (reads / writes) | read-modify-Update (reads / writes) | removal p50 / p99 | direct apply p50 / p99 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		_, w := split(run.ConvergeRequests)
		fmt.Fprintf(&b, "| %d | %s | %s | %.2f | %s / %s | %.2f | %d | %.2f / %.2f | %.2f / %.2f | %s / %s | %s / %s |\n",
			run.N, run.Operator, run.Floor, run.Ratio,
			fmtDur(time.Duration(run.Operator)/time.Duration(run.N)), fmtDur(time.Duration(run.Floor)/time.Duration(run.N)),
			float64(w)/float64(run.N), run.SteadyReconciles, run.SteadyReads, run.SteadyWrites,
			run.UpdateReads, run.UpdateWrites, run.RemovalP50, run.RemovalP99, run.ApplyP50, run.ApplyP99)
	}
	if m := r.Memory; m != nil {
		fmt.Fprintf(&b, "\nMemory at N=%d: process (operator, bench clients stopped) heap in use %s, RSS %s. Informer cache of the operator's kinds, heap by transform:",
			m.N, mib(m.ProcessHeapInuse), mib(m.ProcessRSS))
		for _, t := range []string{"none", "safe", "strip-all-managed-fields"} {
			fmt.Fprintf(&b, " %s %s;", t, mib(m.CacheHeap[t]))
		}
		b.WriteString("\n")
		for _, c := range m.Process {
			fmt.Fprintf(&b, "\nOperator binary as its own process at N=%d, --cache-transform=%s, quiet after %d reconciles: RSS %s (heap in use %s, not after a forced GC).\n",
				m.N, c.CacheTransform, c.Reconciles, mib(c.RSS), mib(c.HeapInuse))
		}
	}
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "\nN=%d requests: converge %v; steady %v; read-modify-Update %v\n", run.N, fmtMap(run.ConvergeRequests), fmtMap(run.SteadyRequests), fmtMap(run.UpdateRequests))
	}
	return b.String()
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "bench.md"), []byte("# Benchmark\n\nReproduce: `make bench`.\n\n"+Markdown(r)), 0o644)
}
