/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command bench runs the benchmark of test/bench on a fresh control plane, prints its table and
// writes it as Markdown and JSON. `make bench` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/test/bench"
)

func main() {
	o := bench.Options{Log: os.Stderr}
	ns := flag.String("n", "100,300,1000", "Comma-separated numbers of InferenceServices.")
	flag.IntVar(&o.Rounds, "r", 3, "Steady state: times every object is reconciled.")
	flag.IntVar(&o.Removals, "m", 50, "Removal latency: sample size.")
	qps := flag.Float64("kube-api-qps", -1, "The operator's (and the floor client's) --kube-api-qps; negative: no client-side limit.")
	flag.IntVar(&o.Burst, "kube-api-burst", 100, "The operator's (and the floor client's) --kube-api-burst.")
	flag.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 8, "The operator's --max-concurrent-reconciles.")
	flag.StringVar(&o.CacheTransform, "cache-transform", controllers.CacheTransformSafe, "The operator's --cache-transform.")
	flag.IntVar(&o.Workers, "workers", 8, "Goroutines creating objects (and writing them, for the floor).")
	flag.StringVar(&o.OperatorBinary, "operator-binary", "", "Also measure this operator binary's RSS and heap as its own process at the largest N (make bench passes bin/llmkube-operator).")
	out := flag.String("out", "docs/benchmarks", "Folder for bench.md, bench.json and the CPU profile; empty writes nothing.")
	uqps := flag.Float64("unthrottled-qps", -1, "The operator process's --kube-api-qps for its unthrottled convergence (negative: no client-side limit).")
	flag.IntVar(&o.Unthrottled.Burst, "unthrottled-burst", 100, "The operator process's --kube-api-burst for its unthrottled convergence.")
	flag.IntVar(&o.Unthrottled.Concurrency, "unthrottled-concurrency", 8, "The operator process's --max-concurrent-reconciles for its unthrottled convergence.")
	flag.IntVar(&o.ProfileN, "profile-n", 1000, "CPU-profile the operator process's convergence at this N (one of -n).")
	flag.IntVar(&o.UpgradeN, "upgrade-n", 1000, "Upgrade scenario: Deployments written by the records-based operator (0 skips).")
	flag.IntVar(&o.RoutersN, "routers-n", 100, "Router scenario: ModelRouters with two backends each (0 skips).")
	sweep := flag.String("sweep", "50/100/4,50/100/8,-1/100/4,-1/100/16", "Comma-separated qps/burst/concurrency[@binary] the operator process also converges -sweep-n objects with (@binary: another build of the operator, for a before-and-after).")
	flag.IntVar(&o.SweepN, "sweep-n", 1000, "N of the knob sweep (one of -n; 0 skips).")
	flag.IntVar(&o.UnrelatedDeployments, "unrelated-deployments", 5000, "Deployments not the operator's created beside the largest N for a second RSS measurement (needs -operator-binary; 0 with -unrelated-configmaps 0 skips).")
	flag.IntVar(&o.UnrelatedConfigMaps, "unrelated-configmaps", 10000, "ConfigMaps not the operator's created beside the largest N for the same measurement.")
	fair := flag.Bool("fair", false, "Fair mode: the unthrottled floor, the floor beside the operator's idle informers and the operator process, each phase on a fresh control plane, in alternating order; writes fair.md and fair.json into -out (needs -operator-binary; uses -n, -repeat, -workers, -cache-transform, -unthrottled-*, -profile-n).")
	repeat := flag.Int("repeat", 2, "Fair mode: repeats of every N (the phase order alternates between them).")
	apiProfile := flag.Bool("apiserver-profile", false, "Fair mode: CPU-profile the API server over every phase into -out and report where the operator's phase spent more of it than the floor+watches phase.")
	firstRepeat := flag.Int("first-repeat", 0, "Fair mode: the index of the first repeat, so a run of -repeat 1 -first-repeat 1 adds the operator-first order to an earlier floor-first run.")
	peer := flag.Bool("peer", false, "Peer mode: this operator and LLMKube's (-peer-dir) converge the same N Model and InferenceService pairs, each on a fresh control plane with its own CRDs, order alternating; steady window and restart; requests from the API server's audit log; writes peer.md and peer.json into -out (needs -operator-binary; uses -n, -repeat, -workers, -cache-transform, -unthrottled-*, -apiserver-profile).")
	peerDir := flag.String("peer-dir", "", "Peer mode: the folder ../shared/peers/llmkube/build.sh prints (manager, crd/).")
	steady := flag.Duration("steady", 60*time.Second, "Peer mode: the steady window after the convergence.")
	flag.Parse()
	o.Unthrottled.QPS = float32(*uqps)
	for _, s := range strings.Split(*sweep, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		var st bench.Settings
		s, st.Binary, _ = strings.Cut(s, "@")
		if _, err := fmt.Sscanf(s, "%g/%d/%d", &st.QPS, &st.Burst, &st.Concurrency); err != nil {
			fmt.Fprintf(os.Stderr, "bad -sweep entry %q: %v\n", s, err)
			os.Exit(2)
		}
		o.Sweep = append(o.Sweep, st)
	}
	o.ProfileDir = *out
	if o.ProfileDir == "" {
		o.ProfileDir = os.TempDir()
	}
	ctrl.SetLogger(logr.Discard())
	o.QPS = float32(*qps)
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bad -n entry %q\n", s)
			os.Exit(2)
		}
		o.Ns = append(o.Ns, n)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if *peer {
		runPeer(ctx, bench.PeerOptions{
			Ns: o.Ns, Repeat: *repeat, OperatorBinary: o.OperatorBinary, PeerDir: *peerDir, Settings: o.Unthrottled,
			CacheTransform: o.CacheTransform, Workers: o.Workers, Steady: *steady, APIServerProfile: *apiProfile,
			ProfileDir: o.ProfileDir, Log: o.Log,
		}, *out)
		return
	}
	if *fair {
		runFair(ctx, o, bench.FairOptions{Repeat: *repeat, FirstRepeat: *firstRepeat, APIServerProfile: *apiProfile}, *out)
		return
	}
	res, err := bench.Main(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	md := bench.Markdown(res)
	fmt.Print(md)
	if *out != "" {
		if err := bench.Write(res, *out); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "wrote %s/bench.md and %s/bench.json\n", *out, *out)
	}
}

// runFair is -fair: bench.Fair with the operator process's unthrottled settings.
func runFair(ctx context.Context, o bench.Options, fo bench.FairOptions, out string) {
	fo.Ns, fo.OperatorBinary, fo.Settings = o.Ns, o.OperatorBinary, o.Unthrottled
	fo.CacheTransform, fo.Workers, fo.ProfileN, fo.ProfileDir, fo.Log = o.CacheTransform, o.Workers, o.ProfileN, o.ProfileDir, o.Log
	res, err := bench.Fair(ctx, fo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	res.Command = fairCommand(os.Args[1:])
	fmt.Print(bench.FairMarkdown(res))
	if out != "" {
		if err := bench.WriteFair(res, out); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "wrote %s/fair.md and %s/fair.json\n", out, out)
	}
}

// runPeer is -peer: bench.Peer, printed and written.
func runPeer(ctx context.Context, po bench.PeerOptions, out string) {
	res, err := bench.Peer(ctx, po)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	res.Command = makeCommand("bench-peer", "BENCH_PEER_ARGS", os.Args[1:], "peer", "peer-dir")
	fmt.Print(bench.PeerMarkdown(res))
	if out != "" {
		if err := bench.WritePeer(res, out); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "wrote %s/peer.md and %s/peer.json\n", out, out)
	}
}

// fairCommand is the make command that reruns a fair run of these arguments.
func fairCommand(args []string) string {
	return makeCommand("bench-fair", "BENCH_FAIR_ARGS", args, "fair")
}

// makeCommand is the make command that reruns a run of these arguments: the target passes
// -operator-binary and the flags named in own itself, the rest is the variable vars.
func makeCommand(target, vars string, args []string, own ...string) string {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case name == "operator-binary" || slices.Contains(own, name):
			if !hasValue && name != "fair" && name != "peer" {
				i++
			}
		default:
			rest = append(rest, args[i])
		}
	}
	return "make " + target + " " + vars + "='" + strings.Join(rest, " ") + "'"
}
