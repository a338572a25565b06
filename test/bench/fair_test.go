/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/llmkube/operator/controllers"
)

// TestFairSmoke runs fair mode at N=20, so that CI proves `make bench-fair` still works. It
// asserts the result's structure (every phase in its order, measured CPU and database), never
// wall-clock time. One repeat: every phase starts a control plane of its own (about 7 s each),
// and TestFairOrder covers the alternation.
func TestFairSmoke(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	binary := buildOperator(ctx, t)
	const repeat = 1
	// The API server's profile chunks last as long as the smoke's phases.
	defer func(d time.Duration) { apiProfileChunk = d }(apiProfileChunk)
	apiProfileChunk = time.Second
	res, err := Fair(ctx, FairOptions{
		Ns: []int{20}, Repeat: repeat, OperatorBinary: binary, Settings: Settings{QPS: -1, Burst: 100, Concurrency: 4},
		CacheTransform: controllers.CacheTransformSafe, Workers: 4, ProfileDir: t.TempDir(), APIServerProfile: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	md := FairMarkdown(res)
	t.Log("\n" + md)
	if len(res.Runs) != repeat {
		t.Fatalf("%d runs, want %d (one per repeat)", len(res.Runs), repeat)
	}
	for _, run := range res.Runs {
		checkFairRun(t, run)
	}
	if repeat >= 2 && (res.Runs[0].Order[0] != PhaseFloor || res.Runs[1].Order[0] != PhaseOperator) {
		t.Errorf("orders %v and %v, want the floor first, then the operator first", res.Runs[0].Order, res.Runs[1].Order)
	}
	if s := res.Summaries; len(s) != 1 || len(s[0].OverFloor.Values) != repeat || s[0].OverFloor.Min > s[0].OverFloor.Max || len(s[0].PerObject) != 3 {
		t.Errorf("summary: %+v", s)
	}
	// The API server's profile of every phase, and where the operator's phase spent more of it.
	if s := res.Summaries; len(s) == 1 && (s[0].APIServerDiff == "" || !strings.Contains(md, "Where the API server spent more CPU")) {
		t.Errorf("no diff of the API server's profiles: %+v", s[0].APIServerDiffOf)
	}
	if !strings.Contains(md, "| floor+watches |") {
		t.Errorf("markdown has no floor+watches line:\n%s", md)
	}
}

// checkFairRun: every phase ran, in the recorded order, with its duration, CPU and database
// size measured, and the operator's own CPU, RSS and requests.
func checkFairRun(t *testing.T, run FairRun) {
	t.Helper()
	if want := fairOrder(run.Repeat); !slices.Equal(run.Order, want) {
		t.Errorf("repeat %d: order %v, want %v", run.Repeat, run.Order, want)
	}
	var names []string
	for _, p := range run.Phases {
		names = append(names, p.Name)
		if p.Took <= 0 || p.CPU.APIServer <= 0 || p.CPU.Etcd <= 0 || p.CPU.Bench <= 0 || p.CPU.Machine < p.CPU.APIServer {
			t.Errorf("repeat %d %s: duration or CPU not measured: %+v", run.Repeat, p.Name, p)
		}
		if p.Name != PhaseOperator && p.Seen < p.Took {
			t.Errorf("repeat %d %s: seen converged after %s, before its last write (%s)", run.Repeat, p.Name, p.Seen, p.Took)
		}
		if fi, err := os.Stat(p.APIServerProfile); err != nil || fi.Size() == 0 || !strings.Contains(p.APIServerProfileTop, "kube-apiserver") {
			t.Errorf("repeat %d %s: the API server's profile %q not written or not read (%v): %q", run.Repeat, p.Name, p.APIServerProfile, err, p.APIServerProfileTop)
		}
		if p.DB.Total == 0 {
			t.Errorf("repeat %d %s: etcd database size not measured: %+v", run.Repeat, p.Name, p.DB)
		}
		// Every phase creates each object's Deployment once, the floor's as the operator's.
		if l := p.Latency["APPLY deployments"]; l.Requests < run.N || l.Mean <= 0 {
			t.Errorf("repeat %d %s: the API server's latency of APPLY deployments not measured: %+v", run.Repeat, p.Name, p.Latency)
		}
	}
	if !slices.Equal(names, run.Order) {
		t.Errorf("repeat %d: phases %v, want them in the recorded order %v", run.Repeat, names, run.Order)
	}
	op := run.Phase(PhaseOperator)
	if op.CPU.Operator <= 0 || op.RSS == 0 || op.Requests["APPLY deployments"] == 0 {
		t.Errorf("repeat %d: operator's CPU, RSS or requests not measured: %+v", run.Repeat, op)
	}
	if run.OverFloor <= 0 || run.OverFloorWatches <= 0 {
		t.Errorf("repeat %d: ratios %v and %v, want both positive", run.Repeat, run.OverFloor, run.OverFloorWatches)
	}
}

// TestFairOrder: every phase in every repeat, the floor first on even repeats and the operator
// first on odd ones.
func TestFairOrder(t *testing.T) {
	for r, first := range []string{PhaseFloor, PhaseOperator, PhaseFloor, PhaseOperator} {
		order := fairOrder(r)
		if order[0] != first {
			t.Errorf("repeat %d: order %v, want %s first", r, order, first)
		}
		if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, []string{PhaseFloor, PhaseFloorWatches, PhaseOperator}) {
			t.Errorf("repeat %d: phases %v, want each phase once", r, order)
		}
	}
}

// TestSummarise: the spread and the CPU per object of two repeats.
func TestSummarise(t *testing.T) {
	phase := func(name string, api time.Duration) FairPhase {
		return FairPhase{Name: name, Took: jsonDuration(api), CPU: CPU{APIServer: jsonDuration(api), Machine: jsonDuration(3 * api / 2)}}
	}
	runs := []FairRun{
		{OverFloor: 1.5, OverFloorWatches: 1.2, Phases: []FairPhase{phase(PhaseFloor, 10*time.Second), phase(PhaseOperator, 20*time.Second)}},
		{OverFloor: 1.1, OverFloorWatches: 1.3, Phases: []FairPhase{phase(PhaseFloor, 30*time.Second), phase(PhaseOperator, 20*time.Second)}},
	}
	s := summarise(10, runs)
	if s.OverFloor.Min != 1.1 || s.OverFloor.Max != 1.5 || s.OverFloorWatches.Min != 1.2 || s.OverFloorWatches.Max != 1.3 {
		t.Errorf("spreads %+v %+v", s.OverFloor, s.OverFloorWatches)
	}
	// 40 s over 2 repeats of 10 objects.
	if got := time.Duration(s.PerObject[PhaseFloor].APIServer); got != 2*time.Second {
		t.Errorf("floor API server CPU per object %s, want 2s", got)
	}
	if got := s.Cores[PhaseOperator]; got != 1.5 {
		t.Errorf("operator's busy cores %v, want 1.5", got)
	}
}

// TestWatchedKinds: the floor+watches phase's cache watches what the operator's own wiring
// watches while it converges InferenceServices, no kind more or less.
func TestWatchedKinds(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := Options{Workers: 4, CacheTransform: controllers.CacheTransformSafe, MaxConcurrentReconciles: 4, QPS: -1, Burst: 100}
	b, stop, err := startPlane(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	const ns = "watched"
	if err := b.namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	op, err := startOperator(ctx, b.cfg, ns, o)
	if err != nil {
		t.Fatal(err)
	}
	defer op.stop()
	if err := parallel(3, 3, func(i int) error { return b.user.Create(ctx, isvc(ns, i)) }); err != nil {
		t.Fatal(err)
	}
	if err := b.waitConverged(ctx, ns, 3, time.Minute); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(b.cfg)
	c := newCounter()
	cfg.WrapTransport = c.wrap
	stopWatches, err := startWatches(ctx, cfg, ns, o.CacheTransform)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWatches()
	// An informer sends its WATCH right after its LIST: wait for both sides to have them all.
	var got, want []string
	_ = poll(ctx, 10*time.Second, func() bool {
		got, want = watches(c.snapshot()), watches(op.counter.snapshot())
		return slices.Equal(got, want)
	})
	if !slices.Equal(got, want) {
		t.Errorf("the floor+watches cache watches %v, the operator %v", got, want)
	}
	if !slices.Contains(want, "inferenceservices") || !slices.Contains(want, "deployments") {
		t.Errorf("the operator watches %v, want at least InferenceServices and Deployments among them", want)
	}
	t.Logf("watched: %v", got)
}

// watches are the resources of the WATCH requests among counts.
func watches(counts map[string]int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if r, ok := strings.CutPrefix(k, "WATCH "); ok {
			out = append(out, r)
		}
	}
	return out
}

// buildOperator builds the operator binary into the test's folder.
func buildOperator(ctx context.Context, t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "llmkube-operator")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, "github.com/llmkube/operator/cmd/operator")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	return binary
}
