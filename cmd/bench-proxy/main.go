/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command bench-proxy runs the router-proxy benchmark of test/benchproxy: direct, a plain
// httputil.ReverseProxy hop and the router-proxy, in one run. `make bench-proxy` runs it. With
// BENCH_PROXY_PLAIN_HOP_UPSTREAM set it is the plain hop instead (the benchmark starts itself so).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/llmkube/operator/test/benchproxy"
)

func main() {
	if u := os.Getenv(benchproxy.PlainHopEnv); u != "" {
		if err := benchproxy.ServePlainHop(u); err != nil {
			fmt.Fprintln(os.Stderr, "plain hop:", err)
			os.Exit(1)
		}
		return
	}
	o := benchproxy.Options{Log: os.Stderr}
	flag.StringVar(&o.ProxyBinary, "proxy-binary", "bin/router-proxy", "The built cmd/router-proxy.")
	flag.IntVar(&o.Concurrency, "c", 64, "Concurrent clients of the throughput runs.")
	flag.DurationVar(&o.Duration, "d", 5*time.Second, "Duration of each throughput round.")
	flag.DurationVar(&o.Warmup, "warmup", time.Second, "Warm-up before each round.")
	flag.IntVar(&o.Rounds, "r", 3, "Rounds of the three modes, interleaved; the median is reported.")
	flag.IntVar(&o.TTFBSamples, "ttfb", 500, "Sequential streams per mode for the time to first byte.")
	flag.IntVar(&o.Streams, "streams", 1000, "Concurrent streams held open for the RSS measurement.")
	flag.Int64Var(&o.MemoryLimit, "memory-limit", 256<<20, "The router's GOMEMLIMIT in bytes, as the operator sets it from the default memory limit; 0 leaves it unset.")
	flag.BoolVar(&o.SkipPayloads, "skip-payloads", false, "Skip the memory-budget cases (16 x 4 MiB, 200 x 400 KB streams).")
	flag.StringVar(&o.OnlyPayload, "only-payload", "", "Run only the memory-budget case whose name begins with this (\"16 x 4 MiB\"), and nothing else.")
	flag.IntVar(&o.Hostile, "hostile", 10, "Hostile clients of each kind (slow bodies, non-reading) beside the normal ones; 0 skips the case.")
	flag.IntVar(&o.Uploads, "uploads", 10, "Concurrent audio uploads for the peak-RSS case; 0 skips it.")
	flag.IntVar(&o.UploadSize, "upload-size", 25_000_000, "Bytes of each upload (OpenAI's file limit is 25 MB).")
	flag.IntVar(&o.BodyCPURequests, "body-cpu-requests", 64, "Bodies per kind and hop for the CPU per MiB of JSON and multipart bodies; 0 skips it.")
	flag.IntVar(&o.BodyCPUSize, "body-cpu-size", 4<<20, "Bytes of each body of the CPU case.")
	flag.BoolVar(&o.Limits, "limits", true, "Measure client limits counted in a redis-server on loopback against limits off (needs redis-server).")
	out := flag.String("out", "docs/benchmarks", "Folder for proxy.md; empty writes nothing.")
	flag.Parse()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	o.HopCommand = []string{self}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	res, err := benchproxy.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Print(benchproxy.Markdown(res))
	if *out != "" {
		if err := benchproxy.Write(res, *out, "make bench-proxy  # go run ./cmd/bench-proxy "+strings.Join(os.Args[1:], " ")); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
	}
	for _, p := range res.Payloads {
		if p.Peak[benchproxy.Router] > p.Payload.Budget() {
			fmt.Fprintf(os.Stderr, "%s: router-proxy peak RSS above the budget\n", p.Payload.Name)
		}
	}
	if n := res.Failures[benchproxy.Router]; n > 0 {
		fmt.Fprintf(os.Stderr, "%d requests through the router-proxy failed\n", n)
		os.Exit(1)
	}
}
