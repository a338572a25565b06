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

	"github.com/llmkube/operator/internal/routerproxy/prefix"
)

// Markdown is a run as a report: the options, the load of the machine, a table per scenario and
// the ratios the goals speak of.
func Markdown(o Options, scenarios []Scenario, results [][]Result, loadBefore, loadAfter, command string) string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	fmt.Fprintf(&b, "Reproduce: `%s`\n\n", command)
	fmt.Fprintf(&b, "Machine: %d cores, %s/%s, %s, shared with other work: load average before %s, after %s (`/proc/loadavg`). Ratios within one run are what count.\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), loadBefore, loadAfter)
	fmt.Fprintf(&b, "Simulated pods: %d pods of %d batch slots each (more requests queue); a request takes %s of decode plus %s of prefill per %d-byte block of its prompt "+
		"that is not in the pod's prefix cache (an LRU of %d blocks per pod, filled with every prompt the pod serves). Requests are chat completions bodies; the scorer chooses "+
		"from the blocks the proxy computes (internal/routerproxy/prefix), the ring from the key the proxy hashed before. "+
		"Open-loop Poisson arrivals at %.0f req/s for %s; the same arrival sequence for every policy. "+
		"Requests still queued %s after the arrivals end count with the time they had waited (a lower bound; column *unfinished*). "+
		"Prefix affinity's load factor c = %.2f. %d rounds of each policy, interleaved; each row is the policy's round with the median p99. "+
		"*Cache-hit ratio*: prompt blocks found in the serving pod's cache over all prompt blocks served.\n\n",
		o.Pods, o.Slots, o.Hit, o.Prefill, prefix.DefaultBlockBytes, o.CacheBlocks, o.Rate, o.Duration, o.Drain, o.LoadFactor, max(o.Rounds, 1))
	fmt.Fprintf(&b, "Workloads: *popular prompts*: %d system prompts of %d blocks, drawn with Zipf exponent %.2f, each with a short question of its own; "+
		"*conversations*: %d system prompts of %d bytes and more (the k-th is 1 + k/2 times as long), %d users each on one of them, "+
		"each request the next turn of its user's conversation (every turn before it, then a new question; an answer is 480 bytes, a question 160), %d turns a conversation.\n\n",
		o.Prefixes, o.PromptBlocks, o.ZipfS, o.SystemPrompts, o.SystemBytes, o.Users, o.Turns)
	for i, sc := range scenarios {
		fmt.Fprintf(&b, "### %s\n\n", sc.Name)
		b.WriteString("| policy | requests | unfinished | throughput (req/s) | p50 | p99 | cache-hit ratio | requests per pod |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, r := range results[i] {
			fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %s | %s | %.2f | %v |\n", r.Policy, r.Requests, r.Unfinished, r.Throughput, ms(r.P50), ms(r.P99), r.HitRatio, r.PerPod)
		}
		b.WriteString("\n")
		by := map[Policy]Result{}
		for _, r := range results[i] {
			by[r.Policy] = r
		}
		rr, lr, ring, sco := by[RoundRobin], by[LeastRequest], by[PrefixRing], by[PrefixScorer]
		fmt.Fprintf(&b, "- least request p99 / round robin p99: %.2f\n", float64(lr.P99)/float64(rr.P99))
		fmt.Fprintf(&b, "- prefix scorer against the ring it replaces: hit ratio %.2f against %.2f, p50 %.2f×, p99 %.2f×; against least request: p99 %.2f×\n\n",
			sco.HitRatio, ring.HitRatio, float64(sco.P50)/float64(ring.P50), float64(sco.P99)/float64(ring.P99), float64(sco.P99)/float64(lr.P99))
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
