/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"
)

// Phases of a fair run.
const (
	// PhaseFloor is the unthrottled floor (floorUnthrottled): a bare client writes what the
	// operator writes.
	PhaseFloor = "floor"
	// PhaseFloorWatches is the same floor beside the operator's informers doing nothing
	// (startWatches): the same work as the operator's, watch events included.
	PhaseFloorWatches = "floor+watches"
	// PhaseOperator is the operator binary as its own process converging the same objects.
	PhaseOperator = "operator"
)

// FairOptions of a fair run (Fair).
type FairOptions struct {
	Ns []int
	// Repeat is how many times every N is measured; the order of the phases alternates.
	Repeat int
	// FirstRepeat is the index of the first repeat (its order is fairOrder's of that index): a
	// long N can be measured in two runs, one per order.
	FirstRepeat int `json:",omitempty"`
	// OperatorBinary is the operator run as its own process in the operator phase.
	OperatorBinary string
	// Settings are the operator process's client and concurrency flags.
	Settings       Settings
	CacheTransform string
	// Workers is how many goroutines create objects (and write them, for the floors).
	Workers int
	// ProfileN, when one of Ns, adds an operator phase at that N, CPU- and allocation-profiled
	// into ProfileDir; it is reported on its own, out of the ratios.
	ProfileN   int
	ProfileDir string
	// APIServerProfile profiles the API server's CPU over every phase of the ratios into
	// ProfileDir (apiserver-<N>-<repeat>-<phase>.pprof), and reports where the operator's phase
	// spent more of it than the floor's.
	APIServerProfile bool      `json:",omitempty"`
	Log              io.Writer `json:"-"`
}

// FairResult is one fair run.
type FairResult struct {
	// Command reproduces the run (the report's first line); "make bench-fair" when empty.
	Command string      `json:"command,omitempty"`
	Machine string      `json:"machine"`
	Load    string      `json:"load"`
	Options FairOptions `json:"options"`
	// Runs are every (N, repeat), in the order run.
	Runs []FairRun `json:"runs"`
	// Summaries are per N, over its repeats.
	Summaries []FairSummary `json:"summaries"`
	// Profile is the extra, profiled operator phase at ProfileN.
	Profile *FairPhase   `json:"profile,omitempty"`
	Started time.Time    `json:"started"`
	Took    jsonDuration `json:"took"`
}

// FairRun is one repeat at one N: the three phases, each on its own control plane.
type FairRun struct {
	N      int `json:"n"`
	Repeat int `json:"repeat"`
	// Order is the phases in the order they ran.
	Order  []string    `json:"order"`
	Phases []FairPhase `json:"phases"`
	// Ratios of the operator's convergence to each floor's.
	OverFloor        float64 `json:"operatorOverFloor"`
	OverFloorWatches float64 `json:"operatorOverFloorWatches"`
}

// FairPhase is one phase on a fresh control plane.
type FairPhase struct {
	Name string `json:"name"`
	// Took is the wall time from the first create to the last object converged (the floors:
	// their last write).
	Took jsonDuration `json:"took"`
	// Seen is, for the floors, the wall time until the benchmark's observer (a watch) saw every
	// object converged: how the operator phase's Took is timed, watch latency included.
	Seen jsonDuration `json:"seen,omitempty"`
	// Load is the machine's load average when the phase started (other tenants of its cores).
	Load string `json:"load"`
	// CPU is the API server's and etcd's (and in the operator phase the operator's) over the
	// same window.
	CPU CPU `json:"cpu"`
	// DB is etcd's database at the end of the phase.
	DB DB `json:"db"`
	// IdleCores is the API server's CPU at rest right before the phase: the background in it.
	IdleCores float64 `json:"apiserverIdleCores"`
	// Operator phase: the process's RSS at the end, its requests by verb and resource (from the
	// API server's metrics, without the benchmark's creates), reconciles and profiles.
	RSS        uint64         `json:"rss,omitempty"`
	Requests   map[string]int `json:"requests,omitempty"`
	Reconciles int            `json:"reconciles,omitempty"`
	Profile    string         `json:"profile,omitempty"`
	ProfileTop string         `json:"profileTop,omitempty"`
	// Latency is the API server's own mean latency per verb and resource over the phase (its
	// apiserver_request_duration_seconds), every client's requests: the benchmark's creates
	// (POST inferenceservices) and the writes of the floor or of the operator.
	Latency   map[string]VerbLatency `json:"latency,omitempty"`
	Allocs    string                 `json:"allocsProfile,omitempty"`
	AllocsTop string                 `json:"allocsProfileTop,omitempty"`
	// APIServerProfile is the API server's CPU profile over the phase (FairOptions.APIServerProfile).
	APIServerProfile    string `json:"apiserverProfile,omitempty"`
	APIServerProfileTop string `json:"apiserverProfileTop,omitempty"`
}

// FairSummary is one N over its repeats.
type FairSummary struct {
	N                int    `json:"n"`
	OverFloor        Spread `json:"operatorOverFloor"`
	OverFloorWatches Spread `json:"operatorOverFloorWatches"`
	// PerObject is the mean CPU per object of each phase, by phase name.
	PerObject map[string]CPU `json:"cpuPerObject"`
	// APIServerDiff is `go tool pprof -top -cum -diff_base` of the API server's profile in the
	// floor+watches phase against the operator phase of one repeat (APIServerDiffOf): the
	// functions the API server spent more CPU in for the operator than for the same writes and
	// watches from a bare client.
	APIServerDiff   string    `json:"apiserverDiff,omitempty"`
	APIServerDiffOf [2]string `json:"apiserverDiffOf,omitzero"`
	// Cores is how many of the machine's cores each phase kept busy on average, by phase name:
	// near the machine's count, the phase's time is its CPU divided by the cores.
	Cores map[string]float64 `json:"busyCores"`
}

// Spread is a ratio over the repeats.
type Spread struct {
	Values []float64 `json:"values"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
}

// fairOrder is the order of the phases of a repeat: the floor first on even repeats, the
// operator first on odd ones. Each phase has its own control plane, so the order is only about
// what the machine does meanwhile (its other load, its caches, its clock), and alternating it
// spreads that over both sides.
func fairOrder(repeat int) []string {
	return alternating(repeat, PhaseFloor, PhaseFloorWatches, PhaseOperator)
}

// alternating is the order of a repeat's phases: as given on even repeats, reversed on odd
// ones, so that no phase always runs on a machine another one has just warmed.
func alternating(repeat int, phases ...string) []string {
	if repeat%2 == 1 {
		slices.Reverse(phases)
	}
	return phases
}

// Fair compares the operator with the floors phase by phase, each phase on a fresh control
// plane, so that neither side runs on an etcd and an API server the other one has grown.
func Fair(ctx context.Context, fo FairOptions) (*FairResult, error) {
	if fo.Log == nil {
		fo.Log = io.Discard
	}
	if fo.OperatorBinary == "" {
		return nil, errors.New("fair mode needs the operator binary")
	}
	fo.Repeat = max(fo.Repeat, 1)
	res := &FairResult{Options: fo, Started: time.Now().UTC(), Machine: Machine(), Load: loadAverage()}
	for _, n := range fo.Ns {
		var runs []FairRun
		for r := fo.FirstRepeat; r < fo.FirstRepeat+fo.Repeat; r++ {
			run := FairRun{N: n, Repeat: r, Order: fairOrder(r)}
			for _, name := range run.Order {
				ph, err := fairPhase(ctx, fo, name, n, r, 0)
				if err != nil {
					return nil, fmt.Errorf("N=%d repeat %d %s: %w", n, r, name, err)
				}
				run.Phases = append(run.Phases, *ph)
			}
			op, fl, fw := run.Phase(PhaseOperator), run.Phase(PhaseFloor), run.Phase(PhaseFloorWatches)
			run.OverFloor, run.OverFloorWatches = ratio(op.Took, fl.Took), ratio(op.Took, fw.Took)
			fmt.Fprintf(fo.Log, "%s  N=%d repeat %d (%v): operator %s, floor %s (%.2fx), floor+watches %s (%.2fx)\n",
				time.Now().Format("15:04:05"), n, r, run.Order, op.Took, fl.Took, run.OverFloor, fw.Took, run.OverFloorWatches)
			runs = append(runs, run)
		}
		res.Runs = append(res.Runs, runs...)
		sum := summarise(n, runs)
		for _, run := range runs {
			base, op := run.Phase(PhaseFloorWatches).APIServerProfile, run.Phase(PhaseOperator).APIServerProfile
			if base != "" && op != "" {
				sum.APIServerDiffOf = [2]string{base, op}
				sum.APIServerDiff = pprofDiff(apiServerBinary(), base, op, filepath.Join(fo.ProfileDir, fmt.Sprintf("apiserver-%d-%d-diff.top.txt", n, run.Repeat)))
				break
			}
		}
		res.Summaries = append(res.Summaries, sum)
		if n == fo.ProfileN {
			// The profile's window is fixed: fit it to the fastest floor of this N.
			floor := time.Duration(slices.MinFunc(runs, func(a, b FairRun) int {
				return int(a.Phase(PhaseFloor).Took - b.Phase(PhaseFloor).Took)
			}).Phase(PhaseFloor).Took)
			ph, err := fairPhase(ctx, fo, PhaseOperator, n, -1, floor)
			if err != nil {
				return nil, fmt.Errorf("N=%d profile: %w", n, err)
			}
			res.Profile = ph
		}
	}
	res.Load += " → " + loadAverage()
	res.Took = jsonDuration(time.Since(res.Started))
	return res, nil
}

// Phase is the run's phase of that name (the zero phase when missing).
func (r FairRun) Phase(name string) FairPhase {
	for _, p := range r.Phases {
		if p.Name == name {
			return p
		}
	}
	return FairPhase{}
}

// fairPhase starts a control plane, warms it up as Main does, waits for it to be quiet and runs
// one phase of n objects on it. With profileFloor, the operator phase is profiled over a window
// fitted to that floor.
func fairPhase(ctx context.Context, fo FairOptions, name string, n, repeat int, profileFloor time.Duration) (*FairPhase, error) {
	o := Options{
		Workers: fo.Workers, OperatorBinary: fo.OperatorBinary, CacheTransform: fo.CacheTransform,
		ProfileDir: fo.ProfileDir, AllocsProfile: true, Log: fo.Log,
	}
	b, stop, err := startPlane(ctx, o)
	if err != nil {
		return nil, err
	}
	defer stop()
	b.disposable = true
	// A cold API server answers its first requests of a kind slowly; no phase should pay it.
	if err := b.warmUp(ctx); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	ph := &FairPhase{Name: name, IdleCores: b.quiet(ctx, 0.2, 10*time.Second), Load: loadAverage()}
	lat0, err := b.apiReqs.latency(ctx)
	if err != nil {
		return nil, err
	}
	var apiProf *apiServerProfile
	if fo.APIServerProfile && profileFloor == 0 {
		if apiProf, err = startAPIServerProfile(ctx, b.cfg); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	switch name {
	case PhaseFloor:
		if ph.Took, ph.CPU, err = b.floorUnthrottled(ctx, n); err != nil {
			return nil, err
		}
	case PhaseFloorWatches:
		cfg, err := b.operatorUserConfig("bench-operator-watches")
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = fo.Settings.QPS, fo.Settings.Burst
		stopWatches, err := startWatches(ctx, cfg, floorNamespace(n), fo.CacheTransform)
		if err != nil {
			return nil, err
		}
		defer stopWatches()
		if ph.Took, ph.CPU, err = b.floorUnthrottled(ctx, n); err != nil {
			return nil, err
		}
	case PhaseOperator:
		p, err := b.processRun(ctx, n, profileFloor, fo.Settings, true, profileFloor > 0)
		if err != nil {
			return nil, err
		}
		ph.Took, ph.CPU, ph.RSS, ph.Requests, ph.Reconciles = p.Converge, p.CPU, p.RSS, p.Requests, p.Reconciles
		ph.Profile, ph.ProfileTop, ph.Allocs, ph.AllocsTop = p.Profile, p.ProfileTop, p.AllocsProfile, p.AllocsProfileTop
	default:
		return nil, fmt.Errorf("unknown phase %q", name)
	}
	if name != PhaseOperator {
		// After the floor's window: the wait costs the API server nothing the window counts.
		if err := b.waitConverged(ctx, floorNamespace(n), n, time.Minute); err != nil {
			return nil, err
		}
		ph.Seen = jsonDuration(time.Since(start))
	}
	// After the floors' seen: stopping the profile waits for its last chunk.
	if apiProf != nil {
		ph.APIServerProfile = filepath.Join(fo.ProfileDir, fmt.Sprintf("apiserver-%d-%d-%s.pprof", n, repeat, name))
		if err := apiProf.stop(ph.APIServerProfile); err != nil {
			return nil, fmt.Errorf("the API server's profile: %w", err)
		}
		ph.APIServerProfileTop = pprofTop(apiServerBinary(), ph.APIServerProfile)
	}
	lat1, err := b.apiReqs.latency(ctx)
	if err != nil {
		return nil, err
	}
	ph.Latency = latencyDelta(lat0, lat1)
	if ph.DB, err = b.dbSize(ctx); err != nil {
		return nil, err
	}
	b.logf("N=%d %s took %s; CPU API server %s, etcd %s, operator %s; etcd db %s", n, name, ph.Took, ph.CPU.APIServer, ph.CPU.Etcd, ph.CPU.Operator, mib(ph.DB.Total))
	return ph, nil
}

// quiet waits until the API server uses less than cores over half a second, at most for
// patience, and returns the last rate: a control plane just started is still busy with its own
// bootstrapping (RBAC, API Priority and Fairness, the CRDs' OpenAPI), which no phase should pay.
func (b *bench) quiet(ctx context.Context, cores float64, patience time.Duration) float64 {
	deadline := time.Now().Add(patience)
	for {
		m0, t0 := b.cpu.mark(-1), time.Now()
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(500 * time.Millisecond):
		}
		rate := float64(m0.to(b.cpu.mark(-1)).APIServer) / float64(time.Since(t0))
		if rate < cores || time.Now().After(deadline) {
			return rate
		}
	}
}

// summarise is one N over its runs.
func summarise(n int, runs []FairRun) FairSummary {
	s := FairSummary{N: n, PerObject: map[string]CPU{}, Cores: map[string]float64{}}
	sums, took := map[string]CPU{}, map[string]time.Duration{}
	for _, r := range runs {
		s.OverFloor.add(r.OverFloor)
		s.OverFloorWatches.add(r.OverFloorWatches)
		for _, p := range r.Phases {
			sums[p.Name] = sums[p.Name].plus(p.CPU)
			took[p.Name] += time.Duration(p.Took)
		}
	}
	for name, c := range sums {
		s.PerObject[name] = c.per(n * len(runs))
		s.Cores[name] = c.Cores(took[name])
	}
	return s
}

func (s *Spread) add(v float64) {
	if len(s.Values) == 0 || v < s.Min {
		s.Min = v
	}
	if len(s.Values) == 0 || v > s.Max {
		s.Max = v
	}
	s.Values = append(s.Values, v)
}
