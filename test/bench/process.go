/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// ProcessRun is the operator binary as its own process at one N: it converges N new
// InferenceServices, reconciles each once more with nothing to do, and is restarted over them.
type ProcessRun struct {
	N        int      `json:"n"`
	Settings Settings `json:"settings"`
	// Converge is the wall time from the first create to the last object converged; FloorRatio
	// is it over the unthrottled floor of the same N.
	Converge   jsonDuration `json:"converge"`
	FloorRatio float64      `json:"floorRatio"`
	// Requests are the operator's requests during convergence, from the API server's metrics.
	Requests map[string]int `json:"requests"`
	// Reconciles during convergence (controller-runtime's counter).
	Reconciles int `json:"reconciles"`
	CPU        CPU `json:"cpu"`
	// NoOp: every object reconciled once more, with nothing to do.
	NoOpReconciles int            `json:"noOpReconciles"`
	NoOpRequests   map[string]int `json:"noOpRequests"`
	NoOpCPU        CPU            `json:"noOpCPU"`
	// Profile is the CPU profile of the convergence (a file beside the results), and its top
	// functions by flat and cumulative CPU.
	Profile    string `json:"profile,omitempty"`
	ProfileTop string `json:"profileTop,omitempty"`
	// AllocsProfile is the allocations of the convergence (with Options.AllocsProfile), a
	// file beside the CPU profile, and its top functions by allocated bytes.
	AllocsProfile    string `json:"allocsProfile,omitempty"`
	AllocsProfileTop string `json:"allocsProfileTop,omitempty"`
	// RSS of the operator process once the convergence is over.
	RSS     uint64 `json:"rss,omitempty"`
	Restart *Phase `json:"restart,omitempty"`
	// Models: N Model and InferenceService pairs converged and restarted over (modelsRun).
	Models *ModelsRun `json:"models,omitempty"`
	// Neighbour read latency during the convergence.
	Neighbour Neighbour `json:"neighbour"`
}

// Phase is one window of the operator process: requests, reconciles and CPU.
type Phase struct {
	// Took is from the start of the window until the last reconcile of it finished.
	Took       jsonDuration   `json:"took"`
	Requests   map[string]int `json:"requests"`
	Reconciles int            `json:"reconciles"`
	CPU        CPU            `json:"cpu"`
	// RSS of the operator process at the end of the window.
	RSS uint64 `json:"rss,omitempty"`
}

// window measures what happens between its start and end: requests the API server served
// (minus what the benchmark sent), CPU of the operator, the API server and etcd, reconciles.
type window struct {
	b        *bench
	p        *process
	start    time.Time
	requests map[string]int
	cpu      cpuMark
	rec      float64
	kind     string
}

func (b *bench) openWindow(ctx context.Context, p *process, kind string) (*window, error) {
	w := &window{b: b, p: p, start: time.Now(), kind: kind}
	var err error
	if w.requests, err = b.apiReqs.snapshot(ctx); err != nil {
		return nil, err
	}
	pid := -1
	if p != nil {
		pid = p.pid()
		w.rec = p.reconciles(kind)
	}
	w.cpu = b.cpu.mark(pid)
	return w, nil
}

// close ends the window once the operator has finished at least want more reconciles of the
// window's kind and then been quiet for a second; own is what the benchmark sent meanwhile.
func (w *window) close(ctx context.Context, p *process, want int, own map[string]int) (*Phase, error) {
	// CPU is read at the last reconcile, so that the quiet second (and its scrapes) is not in it.
	end := w.b.cpu.mark(p.pid())
	last, err := waitQuiet(ctx, p, w.kind, w.rec+float64(want), time.Second, func() { end = w.b.cpu.mark(p.pid()) })
	if err != nil {
		return nil, err
	}
	after, err := w.b.apiReqs.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	ph := &Phase{
		Took:       jsonDuration(last.Sub(w.start)),
		Requests:   minus(delta(w.requests, after), own),
		Reconciles: int(p.reconciles(w.kind) - w.rec),
		CPU:        w.cpu.to(end),
		RSS:        procRSS(p.pid()),
	}
	return ph, nil
}

// waitQuiet waits until the process has finished at least want reconciles of kind and then none
// for quiet, and returns when the last one finished (to the polling interval). changed, when not
// nil, is called whenever the count moved.
//
// Note: every poll is a scrape of the operator's metrics endpoint, which costs the operator CPU;
// 10 filtered, uncompressed scrapes a second keep that well under a percent.
func waitQuiet(ctx context.Context, p *process, kind string, want float64, quiet time.Duration, changed func()) (time.Time, error) {
	last, lastChange := p.reconciles(kind), time.Now()
	err := poll(ctx, 20*time.Minute, func() bool {
		time.Sleep(100 * time.Millisecond)
		if r := p.reconciles(kind); r != last {
			last, lastChange = r, time.Now()
			if changed != nil {
				changed()
			}
		}
		return last >= want && time.Since(lastChange) > quiet
	})
	return lastChange, err
}

// processRun converges n InferenceServices with the operator binary, unthrottled, then measures
// no-op reconciles and a restart over them.
//
// With convergeOnly, it stops after the convergence (a point of the knob sweep).
func (b *bench) processRun(ctx context.Context, n int, floor time.Duration, s Settings, convergeOnly, profile bool) (*ProcessRun, error) {
	ns := fmt.Sprintf("process-%d-%d", n, b.processRuns.Add(1))
	if err := b.namespace(ctx, ns); err != nil {
		return nil, err
	}
	// After the process has stopped (the defer below runs first), nothing needs its Services.
	defer func() { _ = b.deleteServices(ctx, ns) }()
	run := &ProcessRun{N: n, Settings: s}
	p, err := b.startProcess(ctx, ns, s, b.o.CacheTransform)
	if err != nil {
		return nil, err
	}
	defer func() { p.stop() }()
	b.logf("N=%d operator process (%s): create and wait for convergence", n, s)
	w, err := b.openWindow(ctx, p, "inferenceservice")
	if err != nil {
		return nil, err
	}
	// Both profiles cover one fixed window: twice the floor plus 5 s, which the goal (1.2x) fits
	// in; the idle rest of it holds no samples.
	window := 2*floor + 5*time.Second
	profDone := make(chan error, 1)
	if profile {
		if err := os.MkdirAll(b.o.ProfileDir, 0o755); err != nil {
			return nil, err
		}
		run.Profile = filepath.Join(b.o.ProfileDir, fmt.Sprintf("cpu-converge-%d.pprof", n))
		go func() { profDone <- p.profile(ctx, "profile", window, run.Profile) }()
	} else {
		profDone <- nil
	}
	allocsDone := make(chan error, 1)
	if profile && b.o.AllocsProfile {
		// Over the same window: net/http/pprof answers allocs?seconds= with the difference of
		// two snapshots, so the allocations before the window (the cache's sync) are not in it.
		run.AllocsProfile = filepath.Join(b.o.ProfileDir, fmt.Sprintf("allocs-converge-%d.pprof", n))
		go func() { allocsDone <- p.profile(ctx, "allocs", window, run.AllocsProfile) }()
	} else {
		allocsDone <- nil
	}
	stop := b.watchNeighbour(ctx)
	if err := parallel(n, b.o.Workers, func(i int) error { return b.user.Create(ctx, isvc(ns, i)) }); err != nil {
		return nil, err
	}
	if err := b.waitConverged(ctx, ns, n, 20*time.Minute); err != nil {
		return nil, err
	}
	run.Converge = jsonDuration(time.Since(w.start))
	run.Neighbour = stop()
	if floor > 0 {
		run.FloorRatio = float64(run.Converge) / float64(floor)
	}
	ph, err := w.close(ctx, p, n, map[string]int{"POST inferenceservices": n})
	if err != nil {
		return nil, err
	}
	run.Requests, run.Reconciles, run.CPU, run.RSS = ph.Requests, ph.Reconciles, ph.CPU, ph.RSS
	vsFloor := ""
	if floor > 0 {
		vsFloor = fmt.Sprintf(" (%.2f x unthrottled floor)", run.FloorRatio)
	}
	b.logf("N=%d operator process took %s%s, %d reconciles, CPU %s (API server %s, etcd %s)",
		n, run.Converge, vsFloor, run.Reconciles, run.CPU.Operator, run.CPU.APIServer, run.CPU.Etcd)
	// The profile holds the convergence alone: nothing else happens until its window ends.
	if err := <-profDone; err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if run.Profile != "" {
		run.ProfileTop = pprofTop(b.o.OperatorBinary, run.Profile)
	}
	if err := <-allocsDone; err != nil {
		return nil, fmt.Errorf("allocs profile: %w", err)
	}
	if run.AllocsProfile != "" {
		run.AllocsProfileTop = pprofTop(b.o.OperatorBinary, run.AllocsProfile, "-sample_index=alloc_space")
	}
	if convergeOnly {
		return run, nil
	}

	// No-op reconciles: an annotation the operator does not read, once on every object.
	if w, err = b.openWindow(ctx, p, "inferenceservice"); err != nil {
		return nil, err
	}
	if err := b.touchAll(ctx, &inferencev1alpha1.InferenceService{}, ns, n, "no-op"); err != nil {
		return nil, err
	}
	if ph, err = w.close(ctx, p, n, map[string]int{"PATCH inferenceservices": n}); err != nil {
		return nil, err
	}
	run.NoOpReconciles, run.NoOpRequests, run.NoOpCPU = ph.Reconciles, ph.Requests, ph.CPU

	// Restart: stop it, start it again over the converged objects.
	p.stop()
	b.logf("N=%d operator process restarted over %d converged InferenceServices", n, n)
	if w, err = b.openWindow(ctx, nil, "inferenceservice"); err != nil {
		return nil, err
	}
	if p, err = b.startProcess(ctx, ns, s, b.o.CacheTransform); err != nil {
		return nil, err
	}
	if run.Restart, err = w.close(ctx, p, n, nil); err != nil {
		return nil, err
	}
	b.logf("N=%d restart: %d reconciles in %s, requests %v", n, run.Restart.Reconciles, run.Restart.Took, run.Restart.Requests)
	p.stop()
	if run.Models, err = b.modelsRun(ctx, n, s); err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	return run, nil
}

// touchAll patches an annotation the operator does not read onto the n objects of ns named like
// isvc's, so each is reconciled once with nothing to do.
func (b *bench) touchAll(ctx context.Context, kind client.Object, ns string, n int, value string) error {
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, touchKey, value))
	return parallel(n, b.o.Workers, func(i int) error {
		obj := kind.DeepCopyObject().(client.Object)
		obj.SetNamespace(ns)
		obj.SetName(fmt.Sprintf("model-%04d", i))
		return b.user.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
	})
}

// pprofDiff is `go tool pprof -top -cum` of profile less base (what profile spent more on), written
// to out with the flat view; empty when go is not there.
func pprofDiff(binary, base, profile, out string) string {
	return pprofViews(out, binary, profile, "-diff_base", base)
}

// pprofTop is `go tool pprof -top -cum` of a profile (where the time goes, by caller), written
// beside it with the flat view; empty when go is not there.
func pprofTop(binary, profile string, args ...string) string {
	return pprofViews(strings.TrimSuffix(profile, ".pprof")+".top.txt", binary, profile, args...)
}

// pprofViews writes the cumulative and the flat `go tool pprof -top` of a profile to out, and
// returns the cumulative one.
func pprofViews(out, binary, profile string, args ...string) string {
	top := func(more ...string) ([]byte, error) {
		a := append(append([]string{"tool", "pprof", "-top", "-nodecount=40"}, args...), more...)
		return exec.Command("go", append(a, binary, profile)...).Output()
	}
	cum, err := top("-cum")
	if err != nil {
		return ""
	}
	flat, _ := top()
	_ = os.WriteFile(out, append(append(cum, '\n'), flat...), 0o644)
	return string(cum)
}
