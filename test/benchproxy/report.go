/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Markdown is the run as a report: the table, the ratios, the goals, and the load.
func Markdown(r *Result) string {
	var b strings.Builder
	o := r.Options
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }
	added := func(d time.Duration) string {
		return fmt.Sprintf("%+.0f µs", float64(d)/float64(time.Microsecond))
	}
	fmt.Fprintf(&b, "Machine: %s. Client, fake upstream, plain hop and router-proxy share the machine; the upstream and the client run in the benchmark's process, each hop in its own.\n\n", r.Machine)
	fmt.Fprintf(&b, "Non-streaming chat completions at %d concurrent, %d rounds of %s (after %s warm-up) per mode, interleaved; the median round by req/s.\n\n", o.Concurrency, o.Rounds, o.Duration, o.Warmup)
	b.WriteString("| mode | req/s at " + fmt.Sprint(o.Concurrency) + " | vs direct | vs plain hop | p50 / p99 at " + fmt.Sprint(o.Concurrency) + " | one client: p50 / p99 | one client: added p50 / p99 | stream TTFB p50 / p99 | TTFB added p50 / p99 | failed |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	d, h := r.Through[Direct], r.Through[PlainHop]
	ud, fd := r.Unloaded[Direct], r.TTFB[Direct]
	for _, m := range Modes {
		t, f, u := r.Through[m], r.TTFB[m], r.Unloaded[m]
		fmt.Fprintf(&b, "| %s | %.0f | %.2fx | %.2fx | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %d |\n", m, t.RPS, t.RPS/d.RPS, t.RPS/h.RPS,
			us(t.P50), us(t.P99), us(u.P50), us(u.P99), added(u.P50-ud.P50), added(u.P99-ud.P99),
			us(f.P50), us(f.P99), added(f.P50-fd.P50), added(f.P99-fd.P99), r.Failures[m])
	}
	fmt.Fprintf(&b, "\nRSS of the hop process, idle and with %d concurrent streams open (each holding its first chunk):\n\n", o.Streams)
	b.WriteString("| process | idle | with streams |\n| --- | --- | --- |\n")
	for _, m := range []Mode{PlainHop, Router} {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", m, mib(r.RSS[m].IdleRSS), mib(r.RSS[m].StreamsRSS))
	}
	if len(r.Payloads) > 0 {
		limit := "not set"
		if o.MemoryLimit > 0 {
			limit = fmt.Sprintf("%s (GOMEMLIMIT %d bytes, as the Deployment sets it from the container's limit)", mib(uint64(o.MemoryLimit)), o.MemoryLimit)
		}
		fmt.Fprintf(&b, "\nMemory budget with real payloads: peak RSS of the hop process while every request's body is in flight (held by the upstream), against %d MiB + %.1f x the bytes of the bodies in flight. Router memory limit: %s.\n\n", BudgetBase>>20, BudgetFactor, limit)
		b.WriteString("| case | bodies in flight | budget | plain hop peak | router-proxy peak | within budget |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, p := range r.Payloads {
			within := "yes"
			if p.Peak[Router] > p.Payload.Budget() {
				within = "**no**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", p.Payload.Name, mib(uint64(p.Payload.Requests*p.Payload.Size)), mib(p.Payload.Budget()), mib(p.Peak[PlainHop]), mib(p.Peak[Router]), within)
		}
	}
	b.WriteString(hostileMarkdown(r))
	b.WriteString(limitsMarkdown(r))
	rt := r.Through[Router]
	fmt.Fprintf(&b, "\nGoals: req/s ≥ 0.9× the plain hop: **%.2fx**; p99 added under 1 ms (one client, no queueing): **%s**; stream TTFB added under 1 ms (p50): **%s**; RSS with %d streams under 100 MiB: **%s**.\n",
		rt.RPS/h.RPS, added(r.Unloaded[Router].P99-ud.P99), added(r.TTFB[Router].P50-fd.P50), o.Streams, mib(r.RSS[Router].StreamsRSS))
	fmt.Fprintf(&b, "\nAt %d concurrent on 2 shared cores, latency is mostly queueing (concurrency / throughput), so the added latency is measured with one client's sequential requests (%d samples per mode, interleaved).\n", o.Concurrency, o.TTFBSamples)
	fmt.Fprintf(&b, "\nLoad before: `%s`\n\nLoad after: `%s`\n", r.Load[0], r.Load[1])
	return b.String()
}

// Write puts the report into dir/proxy.md.
func Write(r *Result, dir, command string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	md := "# router-proxy benchmark\n\nReproduce: `" + command + "`\n\n" + Markdown(r)
	return os.WriteFile(filepath.Join(dir, "proxy.md"), []byte(md), 0o644)
}
