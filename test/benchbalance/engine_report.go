/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/prefix"
)

// SimMarkdown is the engine simulation's part of the report: a table per scenario and the ratios
// of the goal (engine-aware p99 against least request's, and against the best other policy with
// the spread of the rounds).
func SimMarkdown(o SimOptions, base Options, scenarios []SimScenario, results [][]SimResult) string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	b.WriteString("## Engine simulation: queues, KV caches, router replicas (virtual time)\n\n")
	fmt.Fprintf(&b, "Simulated engines on a virtual clock (test/benchbalance, engine_pod.go): %d pods of %d batch slots; a KV cache of %d blocks of %d bytes of prompt per pod "+
		"(an LRU of the prompts served; the blocks of running requests are pinned; a request is admitted when its prompt fits, else it waits first in line; at its first token its answer takes %d blocks more, "+
		"and when they do not fit the pod preempts the request it admitted last, which is prefilled again: *preemptions*); %s of prefill per block not cached, then %s of decode. "+
		"*TTFT*: arrival to the end of the prefill. The pods export vllm:num_requests_waiting, vllm:num_requests_running and vllm:kv_cache_usage_perc in Prometheus text, "+
		"which each router replica reads every %s with the proxy's parser (internal/routerproxy/engine); the engine-aware scorer runs with the operator's default weights "+
		"(queue %.0f, KV cache %.0f, in flight %.0f, prefix %.0f; KV full at %.0f %%, long prompt %d blocks). Each router replica has its own counts and prefix LRU. "+
		"Poisson arrivals at %.0f req/s for %s of virtual time per round, %d rounds (seeds 1..%d; the same arrivals for every policy); each row is the round with the median p99, "+
		"and the p99 of every round is the run's spread. Popular prompts: %d system prompts of %d blocks (Zipf %.2f); conversations: %d users on %d system prompts of %d bytes and more, %d turns.\n\n",
		o.Pods, o.Slots, o.KVBlocks, prefix.DefaultBlockBytes, o.OutputBlocks, o.Prefill, o.Decode, o.Interval,
		o.Scoring.Queue, o.Scoring.KVCache, o.Scoring.InFlight, o.Scoring.Prefix, o.Scoring.KVFull*100, o.Scoring.LongPrompt,
		base.Rate, base.Duration, max(o.Rounds, 1), max(o.Rounds, 1), base.Prefixes, base.PromptBlocks, base.ZipfS, base.Users, base.SystemPrompts, base.SystemBytes, base.Turns)
	for i, sc := range scenarios {
		fmt.Fprintf(&b, "### %s\n\n", sc.Name)
		b.WriteString("| policy | requests | throughput (req/s) | p50 TTFT | p99 TTFT | p99 of each round | cache-hit ratio | preemptions | requests per pod | p99 tail: requests (long prompts), mean wait and prefill, by pod |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, r := range results[i] {
			var rounds []string
			for _, p := range r.P99s {
				rounds = append(rounds, fmt.Sprintf("%.0f", float64(p)/float64(time.Millisecond)))
			}
			fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %s | %.2f | %d | %v | %s |\n", r.Policy, r.Requests, r.Throughput, ms(r.P50), ms(r.P99), strings.Join(rounds, " / "), r.HitRatio, r.Preemptions, r.PerPod, r.Tail)
		}
		b.WriteString("\n")
		by := map[Policy]SimResult{}
		for _, r := range results[i] {
			by[r.Policy] = r
		}
		ea, okEA := by[EngineAware]
		lr, okLR := by[LeastRequest]
		if !okEA || !okLR {
			continue
		}
		best := lr
		for _, r := range results[i] {
			if r.Policy != EngineAware && r.P99 < best.P99 {
				best = r
			}
		}
		fmt.Fprintf(&b, "- engine-aware p99 / least request p99: **%.2f**; against the best other policy (%s): %.2f\n\n",
			float64(ea.P99)/float64(lr.P99), best.Policy, float64(ea.P99)/float64(best.P99))
	}
	return b.String()
}
