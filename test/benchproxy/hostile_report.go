/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"fmt"
	"strings"
	"time"
)

// hostileMarkdown reports the cases of clients a shared proxy meets: throughput beside hostile
// clients as a ratio of the same clients alone, peak RSS under large uploads against the memory
// limit, and the CPU per MiB of body.
func hostileMarkdown(r *Result) string {
	var b strings.Builder
	if h := r.Hostile; h != nil {
		o := r.Options
		fmt.Fprintf(&b, "\n### Beside hostile clients\n\nNormal clients (non-streaming chat at %d concurrent) through one router-proxy (`--body-read-timeout=2s --stream-idle-timeout=2s`), alone and beside %d clients of each kind; %d rounds of %s, interleaved, the median by req/s. A slow body declares %d MiB and stops after its first MiB; a non-reading client asks for an endless stream and reads nothing.\n\n",
			o.Concurrency, h.N, o.Rounds, o.Duration, slowBodyDeclared>>20)
		b.WriteString("| beside | req/s | vs alone | p50 / p99 | router RSS | goroutines |\n| --- | --- | --- | --- | --- | --- |\n")
		row := func(name string, t Throughput, rss string, g string) {
			fmt.Fprintf(&b, "| %s | %.0f | %.2fx | %v / %v | %s | %s |\n", name, t.RPS, t.RPS/h.Alone.RPS, t.P50.Round(time.Microsecond), t.P99.Round(time.Microsecond), rss, g)
		}
		row("nothing (alone)", h.Alone, "", "")
		row(fmt.Sprintf("%d slow bodies (%d answered)", h.N, h.Answered), h.SlowBodies, mib(h.SlowBodiesRSS), fmt.Sprint(h.SlowBodiesGoroutines))
		row(fmt.Sprintf("%d non-reading clients", h.N), h.NonReading, mib(h.NonReadingRSS), fmt.Sprint(h.NonReadingGoroutines))
		fmt.Fprintf(&b, "\nGoal: ≥ 0.9× alone beside either kind: **%.2fx** (slow bodies), **%.2fx** (non-reading).\n", h.SlowBodies.RPS/h.Alone.RPS, h.NonReading.RPS/h.Alone.RPS)
	}
	if u := r.Uploads; u != nil {
		limit := "no memory limit"
		within := ""
		if u.MemoryLimit > 0 {
			limit = "a " + mib(uint64(u.MemoryLimit)) + " memory limit"
			within = fmt.Sprintf(" Goal: peak ≤ the limit: **%.2fx** of it.", float64(u.Peak)/float64(u.MemoryLimit))
		}
		fmt.Fprintf(&b, "\n### Large uploads\n\n%d audio uploads of %s at once (`/v1/audio/transcriptions`, multipart) to a fresh router-proxy with %s; the upstream holds every admitted one until all are admitted or refused.\n\n", u.Requests, mib(uint64(u.Size)), limit)
		b.WriteString("| admitted | refused (503) | failed | peak RSS |\n| --- | --- | --- | --- |\n")
		fmt.Fprintf(&b, "| %d | %d | %d | %s |\n\n%s\n", u.Admitted, u.Refused, u.Failed, mib(u.Peak), within)
	}
	if c := r.BodyCPU; c != nil {
		fmt.Fprintf(&b, "\n### CPU per MiB of request body\n\n%d bodies of %s per kind and hop, four at a time; the hop process's CPU (user + system, /proc) divided by the MiB it forwarded.\n\n", c.Requests, mib(uint64(c.Size)))
		b.WriteString("| body | plain hop | router-proxy | router vs plain hop |\n| --- | --- | --- | --- |\n")
		for _, k := range []string{"json", "multipart"} {
			p, rp := c.PerMiB[k][PlainHop], c.PerMiB[k][Router]
			ratio := "n/a"
			if p > 0 {
				ratio = fmt.Sprintf("%.2fx", float64(rp)/float64(p))
			}
			fmt.Fprintf(&b, "| %s | %v | %v | %s |\n", k, p.Round(10*time.Microsecond), rp.Round(10*time.Microsecond), ratio)
		}
		if j := c.PerMiB["json"][Router]; j > 0 {
			fmt.Fprintf(&b, "\nThe router-proxy's multipart scan costs **%.2fx** its JSON scan per MiB.\n", float64(c.PerMiB["multipart"][Router])/float64(j))
		}
	}
	return b.String()
}
