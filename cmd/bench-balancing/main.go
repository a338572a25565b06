/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command bench-balancing compares round robin (what a ClusterIP gives), least request, and
// prefix affinity as a ring (before) and as the prefix scorer (now) on simulated pods with a
// prefix cache (test/benchbalance). `make bench-balancing` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/llmkube/operator/test/benchbalance"
)

func main() {
	o := benchbalance.Options{}
	flag.IntVar(&o.Pods, "pods", 4, "Simulated pods.")
	flag.IntVar(&o.Slots, "slots", 4, "Requests a pod serves at once.")
	flag.DurationVar(&o.Hit, "hit", 10*time.Millisecond, "Service time of a request whose whole prompt is in the pod's prefix cache (its decode).")
	flag.DurationVar(&o.Prefill, "prefill", time.Millisecond, "Service time added per 128-byte prompt block not in the pod's prefix cache.")
	flag.IntVar(&o.CacheBlocks, "cache-blocks", 512, "Prompt blocks a pod's prefix cache holds (LRU).")
	flag.IntVar(&o.Prefixes, "prefixes", 64, "Popular prompts: distinct system prompts.")
	flag.IntVar(&o.PromptBlocks, "prompt-blocks", 30, "Popular prompts: blocks of each system prompt.")
	flag.Float64Var(&o.ZipfS, "zipf", 1.1, "Popular prompts: Zipf exponent of the system prompts' popularity (> 1).")
	flag.IntVar(&o.SystemPrompts, "system-prompts", 4, "Conversations: distinct long system prompts.")
	flag.IntVar(&o.SystemBytes, "system-bytes", 4096, "Conversations: bytes of the shortest system prompt.")
	flag.IntVar(&o.Users, "users", 64, "Conversations: users, each on one system prompt.")
	flag.IntVar(&o.Turns, "turns", 8, "Conversations: turns of a conversation before its user starts another.")
	flag.Float64Var(&o.Rate, "rate", 300, "Arrivals per second.")
	flag.DurationVar(&o.Duration, "d", 5*time.Second, "Arrivals last this long per policy.")
	flag.DurationVar(&o.Drain, "drain", 10*time.Second, "Longest wait for queued requests after the arrivals.")
	flag.Uint64Var(&o.Seed, "seed", 1, "Seed of the arrivals and prefixes.")
	flag.Float64Var(&o.LoadFactor, "c", 1.25, "Load factor of prefix affinity's bounded loads (the proxy's --affinity-load-factor).")
	flag.IntVar(&o.Rounds, "r", 3, "Rounds of each policy, interleaved; the median round by p99 is reported.")
	slow := flag.Int("slow", 10, "How many times slower the slow pod of the second scenario is.")
	so := benchbalance.SimOptions{}
	flag.IntVar(&so.KVBlocks, "sim-kv-blocks", 4096, "Engine simulation: a pod's KV cache in 128-byte blocks (4096: 512 KiB of text, about 131k tokens).")
	flag.IntVar(&so.OutputBlocks, "sim-output-blocks", 8, "Engine simulation: KV blocks a request's answer takes from its first token.")
	flag.DurationVar(&so.Interval, "sim-interval", 100*time.Millisecond, "Engine simulation: each router replica's interval between reads of a pod's metrics.")
	simDuration := flag.Duration("sim-d", 5*time.Second, "Engine simulation: virtual seconds of arrivals per round.")
	simRate := flag.Float64("sim-rate", 600, "Engine simulation: arrivals per second (the pods' capacity is about 800 short requests a second).")
	simOnly := flag.Bool("sim-only", false, "Run the engine simulation only (no wall-clock scenarios).")
	simPolicies := flag.String("sim-policies", "", "Engine simulation: the policies to compare, their names as in the report, comma-separated (all when empty).")
	simScenario := flag.String("sim-scenario", "", "Engine simulation: run only the scenarios whose name contains this.")
	flag.IntVar(&so.Rounds, "sim-rounds", 10, "Engine simulation: rounds (seeds 1..n) of each policy; the median round by p99 is reported, every round's p99 is the spread.")
	out := flag.String("out", "docs/benchmarks", "Folder for balancing.md; empty writes nothing.")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	scenarios := []benchbalance.Scenario{
		{Name: "Popular prompts, equal pods", SlowFactor: 1, Workload: benchbalance.Popular},
		{Name: fmt.Sprintf("Popular prompts, one pod %d times slower", *slow), SlowFactor: *slow, Workload: benchbalance.Popular},
		{Name: "Shared system prompts and multi-turn conversations, equal pods", SlowFactor: 1, Workload: benchbalance.Conversations},
		{Name: fmt.Sprintf("Shared system prompts and multi-turn conversations, one pod %d times slower", *slow), SlowFactor: *slow, Workload: benchbalance.Conversations},
	}
	before := benchbalance.LoadAverage()
	var results [][]benchbalance.Result
	if *simOnly {
		scenarios = nil
	}
	for _, sc := range scenarios {
		fmt.Fprintf(os.Stderr, "scenario %s\n", sc.Name)
		r, err := benchbalance.Run(ctx, o, sc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	so.Pods, so.Slots, so.Prefill, so.Decode, so.LoadFactor = o.Pods, o.Slots, o.Prefill, o.Hit, o.LoadFactor
	so.Scoring = benchbalance.DefaultScoring()
	// A name is found in the list rather than split from it: "prefix affinity, scorer (now)" has a comma.
	for _, p := range benchbalance.EnginePolicies {
		if strings.Contains(*simPolicies, string(p)) {
			so.Policies = append(so.Policies, p)
		}
	}
	if *simPolicies != "" && len(so.Policies) == 0 {
		fmt.Fprintf(os.Stderr, "error: -sim-policies %q names none of %q\n", *simPolicies, benchbalance.EnginePolicies)
		os.Exit(2)
	}
	simO := o
	simO.Rate = *simRate
	simScenarios, simBase := benchbalance.SimScenarios(simO, *simDuration)
	var simResults [][]benchbalance.SimResult
	simScenarios = slices.DeleteFunc(simScenarios, func(sc benchbalance.SimScenario) bool { return !strings.Contains(sc.Name, *simScenario) })
	for _, sc := range simScenarios {
		fmt.Fprintf(os.Stderr, "simulation %s\n", sc.Name)
		simResults = append(simResults, benchbalance.RunSim(so, sc))
	}
	report := benchbalance.Markdown(o, scenarios, results, before, benchbalance.LoadAverage(),
		"make bench-balancing  # go run ./cmd/bench-balancing "+strings.Join(os.Args[1:], " ")) +
		benchbalance.SimMarkdown(so, simBase, simScenarios, simResults)
	fmt.Print(report)
	if *out != "" {
		if err := benchbalance.Write(*out, report); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
	}
}
