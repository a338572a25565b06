/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Markdown is a run as a report: the options, the load of the machine, a table per scenario and
// the ratios the goals speak of.
func Markdown(o Options, scenarios []Scenario, results [][]Result, loadBefore, loadAfter, command string) string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	fmt.Fprintf(&b, "Reproduce: `%s`\n\n", command)
	fmt.Fprintf(&b, "Machine: %d cores, %s/%s, %s, shared with other work: load average before %s, after %s (`/proc/loadavg`). Ratios within one run are what count.\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), loadBefore, loadAfter)
	fmt.Fprintf(&b, "Simulated pods: %d pods of %d batch slots each (more requests queue); a request takes %s, or %s when its prefix is in the pod's cache (LRU of %d prefixes). "+
		"Open-loop Poisson arrivals at %.0f req/s for %s, prompt prefixes drawn from %d with Zipf exponent %.2f; the same arrival sequence for every policy. "+
		"Requests still queued %s after the arrivals end count with the time they had waited (a lower bound; column *unfinished*). "+
		"Prefix affinity's load factor c = %.2f. %d rounds of each policy, interleaved; each row is the policy's round with the median p99.\n\n",
		o.Pods, o.Slots, o.Miss, o.Hit, o.CacheSize, o.Rate, o.Duration, o.Prefixes, o.ZipfS, o.Drain, o.LoadFactor, max(o.Rounds, 1))
	for i, sc := range scenarios {
		fmt.Fprintf(&b, "### %s\n\n", sc.Name)
		b.WriteString("| policy | requests | unfinished | throughput (req/s) | p50 | p99 | cache-hit ratio | requests per pod |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, r := range results[i] {
			fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %s | %s | %.2f | %v |\n", r.Policy, r.Requests, r.Unfinished, r.Throughput, ms(r.P50), ms(r.P99), r.HitRatio, r.PerPod)
		}
		b.WriteString("\n")
		rr, lr, pa := results[i][0], results[i][1], results[i][2]
		fmt.Fprintf(&b, "- least request p99 / round robin p99: %.2f\n", float64(lr.P99)/float64(rr.P99))
		fmt.Fprintf(&b, "- prefix affinity p99 / least request p99: %.2f; hit ratio %.2f against %.2f (least request) and %.2f (round robin)\n\n",
			float64(pa.P99)/float64(lr.P99), pa.HitRatio, lr.HitRatio, rr.HitRatio)
	}
	return b.String()
}

// LoadAverage is the first three fields of /proc/loadavg, or "unknown".
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Write puts the report into dir/balancing.md under a title.
func Write(dir, report string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "balancing.md"), []byte("# Router-proxy balancing benchmark\n\n"+report), 0o644)
}
