/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"maps"
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

// TestFairSmoke runs fair mode at N=20 with two repeats, so that CI proves `make bench-fair`
// still works. It asserts the result's structure (every phase, both orders, measured CPU and
// database), never wall-clock time.
func TestFairSmoke(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	binary := buildOperator(ctx, t)
	res, err := Fair(ctx, FairOptions{
		Ns: []int{20}, Repeat: 2, OperatorBinary: binary, Settings: Settings{QPS: -1, Burst: 100, Concurrency: 4},
		CacheTransform: controllers.CacheTransformSafe, Workers: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + FairMarkdown(res))
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs, want 2 (one per repeat)", len(res.Runs))
	}
	var firsts []string
	for _, run := range res.Runs {
		firsts = append(firsts, run.Order[0])
		var names []string
		for _, p := range run.Phases {
			names = append(names, p.Name)
			if p.Took <= 0 || p.CPU.APIServer <= 0 || p.CPU.Etcd <= 0 {
				t.Errorf("repeat %d %s: duration or CPU not measured: %+v", run.Repeat, p.Name, p)
			}
			if p.DB.Total == 0 {
				t.Errorf("repeat %d %s: etcd database size not measured: %+v", run.Repeat, p.Name, p.DB)
			}
		}
		if !slices.Equal(names, run.Order) {
			t.Errorf("repeat %d: phases %v, want them in the recorded order %v", run.Repeat, names, run.Order)
		}
		slices.Sort(names)
		if want := []string{PhaseFloor, PhaseFloorWatches, PhaseOperator}; !slices.Equal(names, want) {
			t.Errorf("repeat %d: phases %v, want %v", run.Repeat, names, want)
		}
		op := run.Phase(PhaseOperator)
		if op.CPU.Operator <= 0 || op.RSS == 0 || op.Requests["APPLY deployments"] == 0 {
			t.Errorf("repeat %d: operator's CPU, RSS or requests not measured: %+v", run.Repeat, op)
		}
		if run.OverFloor <= 0 || run.OverFloorWatches <= 0 {
			t.Errorf("repeat %d: ratios %v and %v, want both positive", run.Repeat, run.OverFloor, run.OverFloorWatches)
		}
	}
	if !slices.Equal(firsts, []string{PhaseFloor, PhaseOperator}) {
		t.Errorf("first phases %v, want the floor first, then the operator first", firsts)
	}
	if s := res.Summaries; len(s) != 1 || len(s[0].OverFloor.Values) != 2 || s[0].OverFloor.Min > s[0].OverFloor.Max {
		t.Errorf("summary: %+v", s)
	}
	if md := FairMarkdown(res); !strings.Contains(md, "floor+watches") {
		t.Errorf("markdown has no floor+watches line:\n%s", md)
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
