/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package bench measures the operator against baselines run in the same process on the same API
// server: convergence against a bare client that writes the same objects (the floor), requests
// per no-op reconcile against a read-modify-Update strategy, the latency of a podLabels removal
// against one direct apply, and the memory of the informer cache. cmd/bench prints and writes it.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// Options of a run.
type Options struct {
	// Ns are the numbers of InferenceServices, one measurement each.
	Ns []int
	// Rounds forces every object to be reconciled this many times in the steady-state phase.
	Rounds int
	// Removals is how many podLabels removals are timed (at most N).
	Removals int
	// QPS, Burst and MaxConcurrentReconciles configure the operator; the floor client gets the
	// same QPS and Burst.
	QPS                     float32
	Burst                   int
	MaxConcurrentReconciles int
	// CacheTransform is the operator's --cache-transform.
	CacheTransform string
	// Workers is how many goroutines create objects (and, for the floor, write them).
	Workers int
	// OperatorBinary, when set, is the operator binary run as its own process: unthrottled
	// convergence with its CPU and the API server's, no-op reconciles, a restart, the upgrade and
	// the routers scenarios, and RSS at the largest N with each cache transform.
	OperatorBinary string
	// Unthrottled are the Settings of the operator process's convergence, beside the unthrottled
	// floor (a negative QPS lifts client-go's limiter: API Priority and Fairness alone).
	Unthrottled Settings
	// ProfileN is the N whose process convergence is CPU-profiled into ProfileDir (0: none).
	ProfileN   int
	ProfileDir string
	// AllocsProfile also records the allocations of the profiled convergence (fair mode).
	AllocsProfile bool `json:",omitempty"`
	// UpgradeN and RoutersN size the upgrade and router scenarios (0: skipped); both need
	// OperatorBinary.
	UpgradeN int
	RoutersN int
	// Sweep are more Settings the operator process converges SweepN objects with, to choose the
	// defaults from.
	Sweep  []Settings
	SweepN int
	// UnrelatedDeployments and UnrelatedConfigMaps are objects not the operator's, created beside
	// the largest N for a second RSS measurement of the operator process (0 and 0: skipped).
	UnrelatedDeployments int
	UnrelatedConfigMaps  int
	// Log gets progress lines; nil is quiet.
	Log io.Writer `json:"-"`
	// plane changes the control plane (the peer comparison's CRDs, audit log, observer).
	plane planeOptions
}

// Result is one run.
type Result struct {
	Machine string   `json:"machine"`
	Load    string   `json:"load"`
	Options Options  `json:"options"`
	Runs    []Run    `json:"runs"`
	Memory  *Memory  `json:"memory,omitempty"`
	Upgrade *Upgrade `json:"upgrade,omitempty"`
	// APIServerIdle is the API server's CPU (cores) with nothing but the neighbour running: the
	// background of every window.
	APIServerIdle float64 `json:"apiserverIdleCores"`
	// NeighbourIdle is the neighbour's read latency with nothing else running.
	NeighbourIdle Neighbour    `json:"neighbourIdle"`
	Routers       *Routers     `json:"routers,omitempty"`
	Started       time.Time    `json:"started"`
	Took          jsonDuration `json:"took"`
}

// Run is the measurement at one N.
type Run struct {
	N int `json:"n"`
	// Converge: operator and floor wall time, from the first create to the last object converged.
	Operator jsonDuration `json:"operator"`
	Floor    jsonDuration `json:"floor"`
	Ratio    float64      `json:"ratio"`
	// FloorCPU and OperatorCPU are the API server's and etcd's CPU during the floor and the
	// in-process operator's convergence (the operator's own CPU is not separable in-process).
	FloorCPU    CPU `json:"floorCPU"`
	OperatorCPU CPU `json:"operatorCPU"`
	// FloorUnthrottled is the floor without a client-side limit, as the operator process's user,
	// run right before the operator process; FloorUnthrottledCPU the API server's and etcd's CPU.
	FloorUnthrottled    jsonDuration `json:"floorUnthrottled"`
	FloorUnthrottledCPU CPU          `json:"floorUnthrottledCPU"`
	// Neighbour read latency during the floor, the unthrottled floor and the operator's convergence.
	NeighbourFloor            Neighbour `json:"neighbourFloor"`
	NeighbourFloorUnthrottled Neighbour `json:"neighbourFloorUnthrottled"`
	NeighbourOperator         Neighbour `json:"neighbourOperator"`
	// Process is the operator binary as its own process (unthrottled), when measured.
	Process *ProcessRun `json:"process,omitempty"`
	// Sweep is the operator process's convergence with each of Options.Sweep.
	Sweep []ProcessRun `json:"sweep,omitempty"`
	// ConvergeRequests are the operator's requests during convergence, by verb and resource.
	ConvergeRequests map[string]int `json:"convergeRequests"`
	// Steady state.
	SteadyReconciles int            `json:"steadyReconciles"`
	SteadyRequests   map[string]int `json:"steadyRequests"`
	SteadyReads      float64        `json:"steadyReadsPerReconcile"`
	SteadyWrites     float64        `json:"steadyWritesPerReconcile"`
	// UpdateStrategy is the records-based read-modify-Update baseline on the same objects.
	UpdateRequests map[string]int `json:"updateStrategyRequests"`
	UpdateReads    float64        `json:"updateStrategyReadsPerReconcile"`
	UpdateWrites   float64        `json:"updateStrategyWritesPerReconcile"`
	// Removal latency of one podLabels key, and of one direct apply (same observation path).
	Removals     int          `json:"removals"`
	RemovalP50   jsonDuration `json:"removalP50"`
	RemovalP99   jsonDuration `json:"removalP99"`
	ApplyP50     jsonDuration `json:"directApplyP50"`
	ApplyP99     jsonDuration `json:"directApplyP99"`
	RemovalRatio float64      `json:"removalRatioP50"`
}

// Memory is measured at the largest N.
type Memory struct {
	N int `json:"n"`
	// CacheHeap is the heap an informer cache of the operator's kinds holds, by transform.
	CacheHeap map[string]uint64 `json:"cacheHeap"`
	// Process is the operator binary measured as its own process, by cache transform.
	Process []Child `json:"process,omitempty"`
	// Unrelated is the process's RSS beside objects that are not the operator's.
	Unrelated *Unrelated `json:"unrelated,omitempty"`
}

type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Seconds())
}

func (d jsonDuration) String() string { return fmtDur(time.Duration(d)) }

const (
	removeKey = "bench-remove"
	keepKey   = "bench-keep"
	touchKey  = "bench.llmkube.dev/touch"
)

// Main runs the whole benchmark on a fresh control plane.
func Main(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	res := &Result{Options: o, Started: time.Now().UTC(), Machine: Machine(), Load: loadAverage()}
	b, stopPlane, err := startPlane(ctx, o)
	if err != nil {
		return nil, err
	}
	defer stopPlane()
	if b.neighbour, err = b.neighbourClient(ctx, b.env); err != nil {
		return nil, fmt.Errorf("neighbour: %w", err)
	}
	stop := b.watchNeighbour(ctx)
	idle0, idleStart := b.cpu.mark(-1), time.Now()
	time.Sleep(5 * time.Second)
	res.NeighbourIdle = stop()
	idle := idle0.to(b.cpu.mark(-1))
	res.APIServerIdle = float64(idle.APIServer) / float64(time.Since(idleStart))
	// A cold API server answers its first requests of a kind slowly; neither side should pay it.
	if err := b.warmUp(ctx); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if o.OperatorBinary != "" && o.UpgradeN > 0 {
		if res.Upgrade, err = b.upgrade(ctx, o.UpgradeN); err != nil {
			return nil, fmt.Errorf("upgrade: %w", err)
		}
	}
	if o.OperatorBinary != "" && o.RoutersN > 0 {
		if res.Routers, err = b.routers(ctx, o.RoutersN); err != nil {
			return nil, fmt.Errorf("routers: %w", err)
		}
	}
	for i, n := range o.Ns {
		run, mem, err := b.one(ctx, n, i == len(o.Ns)-1)
		if err != nil {
			return nil, fmt.Errorf("N=%d: %w", n, err)
		}
		res.Runs = append(res.Runs, *run)
		if mem != nil {
			res.Memory = mem
		}
	}
	res.Load += " → " + loadAverage()
	res.Took = jsonDuration(time.Since(res.Started))
	return res, nil
}

type bench struct {
	env     *envtest.Environment
	cpu     cpuMeter
	apiReqs *apiserverRequests
	// kubeconfigPath is the operator process's kubeconfig.
	kubeconfigPath string
	o              Options
	cfg            *rest.Config
	user           client.Client // the person creating objects: no client-side limit
	observer       cache.Cache   // watches what the operator and the floor write
	stopObs        context.CancelFunc
	processRuns    atomic.Int64
	// neighbour is another tenant of the API server, reading while convergences run.
	neighbour client.Client
	// disposable: the control plane is stopped after one phase (Fair), so nothing needs cleaning.
	disposable bool
}

func newBench(ctx context.Context, cfg *rest.Config, o Options) (*bench, error) {
	userCfg := rest.CopyConfig(cfg)
	userCfg.QPS, userCfg.Burst = 1e6, 1e6
	userCfg.UserAgent = "bench-user"
	user, err := client.New(userCfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, err
	}
	obsCfg := rest.CopyConfig(userCfg)
	obsCfg.UserAgent = "bench-observer"
	obs, err := cache.New(obsCfg, cache.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, err
	}
	kinds := o.plane.observe
	if kinds == nil {
		kinds = []client.Object{&inferencev1alpha1.InferenceService{}, &inferencev1alpha1.ModelRouter{}, &appsv1.Deployment{}, &corev1.Service{}}
	}
	for _, obj := range kinds {
		if _, err := obs.GetInformer(ctx, obj); err != nil {
			return nil, err
		}
	}
	octx, cancel := context.WithCancel(ctx)
	go func() { _ = obs.Start(octx) }()
	if !obs.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("observer cache did not sync")
	}
	return &bench{o: o, cfg: cfg, user: user, observer: obs, stopObs: cancel}, nil
}

func (b *bench) stopObserver() {
	if b.stopObs != nil {
		b.stopObs()
		b.stopObs = nil
		b.observer = nil
	}
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.o.Log, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// isvc is the i-th InferenceService of a namespace, shaped like one a person applies with kubectl.
func isvc(ns string, i int) *inferencev1alpha1.InferenceService {
	obj := &inferencev1alpha1.InferenceService{
		TypeMeta:   metav1.TypeMeta{APIVersion: inferencev1alpha1.GroupVersion.String(), Kind: "InferenceService"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("model-%04d", i), Namespace: ns},
		Spec: inferencev1alpha1.InferenceServiceSpec{
			Model:     inferencev1alpha1.ModelSpec{Source: fmt.Sprintf("hf://org/repo/model-%04d.gguf", i)},
			Replicas:  ptr.To[int32](1),
			PodLabels: map[string]inferencev1alpha1.LabelValue{removeKey: "yes", keepKey: "yes"},
			Args:      []string{"--ctx-size", "8192", "--parallel", "4"},
		},
	}
	// kubectl apply (client-side) keeps the whole manifest in an annotation the operator never reads.
	last, _ := json.Marshal(obj)
	obj.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(last)}
	return obj
}

// parallel runs f(i) for i in [0,n) on workers goroutines and returns the first error.
func parallel(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func (b *bench) namespace(ctx context.Context, name string) error {
	return b.user.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func (b *bench) one(ctx context.Context, n int, last bool) (*Run, *Memory, error) {
	run := &Run{N: n}
	floorNS, opNS := fmt.Sprintf("floor-%d", n), fmt.Sprintf("operator-%d", n)
	if err := b.namespace(ctx, floorNS); err != nil {
		return nil, nil, err
	}
	if err := b.namespace(ctx, opNS); err != nil {
		return nil, nil, err
	}

	// Floor: the same objects, written directly with the operator's QPS and burst.
	b.logf("N=%d floor: create, apply Deployment and Service, apply status", n)
	floorCfg := rest.CopyConfig(b.cfg)
	floorCfg.QPS, floorCfg.Burst, floorCfg.UserAgent = b.o.QPS, b.o.Burst, "bench-floor"
	floorCounter := newCounter()
	floorCfg.WrapTransport = floorCounter.wrap
	floor, err := client.New(floorCfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, nil, err
	}
	stop := b.watchNeighbour(ctx)
	if run.Floor, run.FloorCPU, err = b.floorWrite(ctx, floor, floorNS, n); err != nil {
		return nil, nil, fmt.Errorf("floor: %w", err)
	}
	run.NeighbourFloor = stop()
	b.logf("N=%d floor took %s", n, run.Floor)

	// The operator.
	op, err := startOperator(ctx, b.cfg, opNS, b.o)
	if err != nil {
		return nil, nil, err
	}
	defer op.stop()
	before := op.counter.snapshot()
	b.logf("N=%d operator: create and wait for convergence", n)
	start := time.Now()
	stop = b.watchNeighbour(ctx)
	cpu0 := b.cpu.mark(-1)
	if err := parallel(n, b.o.Workers, func(i int) error { return b.user.Create(ctx, isvc(opNS, i)) }); err != nil {
		return nil, nil, err
	}
	if err := b.waitConverged(ctx, opNS, n, 20*time.Minute); err != nil {
		return nil, nil, err
	}
	run.Operator = jsonDuration(time.Since(start))
	run.OperatorCPU = cpu0.to(b.cpu.mark(-1))
	run.NeighbourOperator = stop()
	run.Ratio = float64(run.Operator) / float64(run.Floor)
	b.logf("N=%d operator took %s (%.2f x floor)", n, run.Operator, run.Ratio)
	if err := settle(ctx, 500*time.Millisecond); err != nil {
		return nil, nil, err
	}
	run.ConvergeRequests = delta(before, op.counter.snapshot())

	// Steady state: every object reconciled Rounds times, nothing changed.
	b.logf("N=%d steady state: %d rounds of a touch on every InferenceService", n, b.o.Rounds)
	before = op.counter.snapshot()
	rec0 := reconciles("inferenceservice")
	for round := 1; round <= b.o.Rounds; round++ {
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, touchKey, strconv.Itoa(round)))
		if err := parallel(n, b.o.Workers, func(i int) error {
			obj := &inferencev1alpha1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("model-%04d", i), Namespace: opNS}}
			return b.user.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
		}); err != nil {
			return nil, nil, err
		}
		want := rec0 + float64(round*n)
		if err := poll(ctx, 5*time.Minute, func() bool { return reconciles("inferenceservice") >= want }); err != nil {
			return nil, nil, fmt.Errorf("steady round %d: %w (reconciles %v of %v)", round, err, reconciles("inferenceservice")-rec0, round*n)
		}
	}
	if err := settle(ctx, time.Second); err != nil {
		return nil, nil, err
	}
	run.SteadyReconciles = int(reconciles("inferenceservice") - rec0)
	run.SteadyRequests = delta(before, op.counter.snapshot())
	r, w := split(run.SteadyRequests)
	run.SteadyReads, run.SteadyWrites = perRec(r, run.SteadyReconciles), perRec(w, run.SteadyReconciles)
	b.logf("N=%d steady: %d reconciles, %d reads, %d writes %v", n, run.SteadyReconciles, r, w, run.SteadyRequests)

	// The records-based strategy on the floor's objects (no operator watches them).
	b.logf("N=%d read-modify-Update baseline", n)
	before = floorCounter.snapshot()
	if err := parallel(n, b.o.Workers, func(i int) error { return readModifyUpdate(ctx, floor, floorNS, i) }); err != nil {
		return nil, nil, fmt.Errorf("update strategy: %w", err)
	}
	run.UpdateRequests = delta(before, floorCounter.snapshot())
	r, w = split(run.UpdateRequests)
	run.UpdateReads, run.UpdateWrites = perRec(r, n), perRec(w, n)

	// Removal latency.
	m := min(b.o.Removals, n)
	b.logf("N=%d removal latency over %d InferenceServices", n, m)
	var removal, direct []time.Duration
	for i := range m {
		d, err := b.removal(ctx, opNS, i)
		if err != nil {
			return nil, nil, err
		}
		removal = append(removal, d)
		if d, err = b.directApply(ctx, floor, floorNS, i); err != nil {
			return nil, nil, err
		}
		direct = append(direct, d)
	}
	run.Removals = m
	if m > 0 {
		run.RemovalP50, run.RemovalP99 = jsonDuration(quantile(removal, 0.5)), jsonDuration(quantile(removal, 0.99))
		run.ApplyP50, run.ApplyP99 = jsonDuration(quantile(direct, 0.5)), jsonDuration(quantile(direct, 0.99))
		run.RemovalRatio = float64(run.RemovalP50) / float64(run.ApplyP50)
	}

	op.stop()
	if err := b.deleteServices(ctx, floorNS); err != nil {
		return nil, nil, err
	}
	if b.o.OperatorBinary != "" {
		// The floor the operator process is compared with runs right before it, as the same user:
		// the same API server state (it grows with every phase) and the same priority level.
		stop := b.watchNeighbour(ctx)
		run.FloorUnthrottled, run.FloorUnthrottledCPU, err = b.floorUnthrottled(ctx, n)
		run.NeighbourFloorUnthrottled = stop()
		if err != nil {
			return nil, nil, err
		}
		if err := b.deleteServices(ctx, floorNamespace(n)); err != nil {
			return nil, nil, err
		}
		b.logf("N=%d unthrottled floor took %s", n, run.FloorUnthrottled)
		if run.Process, err = b.processRun(ctx, n, time.Duration(run.FloorUnthrottled), b.o.Unthrottled, false, n == b.o.ProfileN); err != nil {
			return nil, nil, err
		}
		if n == b.o.SweepN {
			for _, s := range b.o.Sweep {
				p, err := b.processRun(ctx, n, time.Duration(run.FloorUnthrottled), s, true, false)
				if err != nil {
					return nil, nil, err
				}
				run.Sweep = append(run.Sweep, *p)
			}
		}
	}
	if !last {
		return run, nil, b.deleteServices(ctx, opNS)
	}
	mem, err := b.memory(ctx, opNS, n)
	if err != nil || b.o.OperatorBinary == "" {
		return run, mem, err
	}
	for _, t := range []string{controllers.CacheTransformNone, controllers.CacheTransformSafe} {
		b.logf("N=%d operator process, --cache-transform=%s", n, t)
		p, err := b.startProcess(ctx, opNS, b.o.settings(), t)
		if err != nil {
			return nil, nil, err
		}
		_, err = waitQuiet(ctx, p, "inferenceservice", float64(n), 2*time.Second, nil)
		var c *Child
		if err == nil {
			c, err = p.memory(t)
		}
		p.stop()
		if err != nil {
			return nil, nil, err
		}
		mem.Process = append(mem.Process, *c)
	}
	if b.o.UnrelatedDeployments+b.o.UnrelatedConfigMaps > 0 {
		if mem.Unrelated, err = b.unrelated(ctx, opNS, n, mem.Process[len(mem.Process)-1]); err != nil {
			return nil, nil, err
		}
	}
	return run, mem, nil
}

// floorUnthrottled is the floor without a client-side limit, as the operator process's user:
// what the API server itself allows that user.
func (b *bench) floorUnthrottled(ctx context.Context, n int) (jsonDuration, CPU, error) {
	ns := floorNamespace(n)
	if err := b.namespace(ctx, ns); err != nil {
		return 0, CPU{}, err
	}
	b.logf("N=%d unthrottled floor", n)
	cfg, err := b.operatorUserConfig("bench-floor-unthrottled")
	if err != nil {
		return 0, CPU{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return 0, CPU{}, err
	}
	return b.floorWrite(ctx, c, ns, n)
}

// floorNamespace is where the unthrottled floor of n objects writes.
func floorNamespace(n int) string { return fmt.Sprintf("floor-unthrottled-%d", n) }

// operatorUserConfig is a rest.Config as the operator process's user (its kubeconfig) without a
// client-side limit.
func (b *bench) operatorUserConfig(userAgent string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", b.kubeconfigPath)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst, cfg.UserAgent = -1, 0, userAgent
	return cfg, nil
}

// floorWrite is a floor: the user creates n InferenceServices in ns and c writes, for each, what
// the operator writes (writeLikeOperator), on Workers goroutines. It returns the wall time and
// the API server's and etcd's CPU from the first create to the last write.
func (b *bench) floorWrite(ctx context.Context, c client.Client, ns string, n int) (jsonDuration, CPU, error) {
	start, cpu0 := time.Now(), b.cpu.mark(-1)
	err := parallel(n, b.o.Workers, func(i int) error {
		obj := isvc(ns, i)
		if err := b.user.Create(ctx, obj); err != nil {
			return err
		}
		return writeLikeOperator(ctx, c, obj)
	})
	return jsonDuration(time.Since(start)), cpu0.to(b.cpu.mark(-1)), err
}

// settings are the operator's settings of the run (its defaults unless told).
func (o Options) settings() Settings {
	return Settings{QPS: o.QPS, Burst: o.Burst, Concurrency: o.MaxConcurrentReconciles}
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func (b *bench) warmUp(ctx context.Context) error {
	const ns = "warm-up"
	if err := b.namespace(ctx, ns); err != nil {
		return err
	}
	return parallel(20, b.o.Workers, func(i int) error {
		obj := isvc(ns, i)
		if err := b.user.Create(ctx, obj); err != nil {
			return err
		}
		return writeLikeOperator(ctx, b.user, obj)
	})
}

// writeLikeOperator writes what the operator writes for obj: Deployment, Service, status. The
// Deployment and the Service are created as the operator creates them (one apply pinned to
// resourceVersion "1"; ownership/create.go), so that the floor sends the very requests the
// operator sends.
func writeLikeOperator(ctx context.Context, c client.Client, obj *inferencev1alpha1.InferenceService) error {
	dep, err := inferenceservice.Deployment(obj, inferenceservice.Inputs{Replicas: ptr.To[int32](1)})
	if err != nil {
		return err
	}
	a := ownership.Applier{Client: c, FieldManager: ownership.DefaultFieldManager}
	for _, desired := range []kruntime.ApplyConfiguration{dep, inferenceservice.Service(obj)} {
		if _, err := a.ApplyIfChanged(ctx, ownership.Change{Owner: obj, Desired: desired}); err != nil {
			return err
		}
	}
	live := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	return c.Status().Apply(ctx, inferenceservice.Status(obj, live, nil, nil, nil), client.FieldOwner(ownership.DefaultFieldManager), client.ForceOwnership)
}

// readModifyUpdate is one reconcile of the records-based operator: read the live Deployment and
// Service from the API server, merge the desired labels and annotations (recording the keys it
// set) and PUT both back.
func readModifyUpdate(ctx context.Context, c client.Client, ns string, i int) error {
	obj := isvc(ns, i)
	key := client.ObjectKeyFromObject(obj)
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, key, dep); err != nil {
		return err
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, key, svc); err != nil {
		return err
	}
	desired, err := inferenceservice.Deployment(obj, inferenceservice.Inputs{Replicas: ptr.To[int32](1)})
	if err != nil {
		return err
	}
	labels := desired.Spec.Template.Labels
	if dep.Spec.Template.Labels == nil {
		dep.Spec.Template.Labels = map[string]string{}
	}
	var recorded []string
	for k, v := range labels {
		dep.Spec.Template.Labels[k] = v
		recorded = append(recorded, k)
	}
	slices.Sort(recorded)
	if dep.Annotations == nil {
		dep.Annotations = map[string]string{}
	}
	dep.Annotations[ownership.RecordLabels] = strings.Join(recorded, ",")
	if err := c.Update(ctx, dep, client.FieldOwner("manager")); err != nil {
		return err
	}
	for k, v := range inferenceservice.Service(obj).Labels {
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		svc.Labels[k] = v
	}
	return c.Update(ctx, svc, client.FieldOwner("manager"))
}

// removal removes removeKey from the i-th InferenceService's podLabels and times until the
// Deployment's template no longer has it.
func (b *bench) removal(ctx context.Context, ns string, i int) (time.Duration, error) {
	obj := &inferencev1alpha1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("model-%04d", i), Namespace: ns}}
	patch := []byte(fmt.Sprintf(`{"spec":{"podLabels":{%q:null}}}`, removeKey))
	start := time.Now()
	if err := b.user.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return 0, err
	}
	return b.waitLabelGone(ctx, client.ObjectKeyFromObject(obj), start)
}

// directApply is the floor of a removal: one apply of the Deployment without the key, observed
// the same way.
func (b *bench) directApply(ctx context.Context, c client.Client, ns string, i int) (time.Duration, error) {
	obj := &inferencev1alpha1.InferenceService{}
	if err := b.user.Get(ctx, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("model-%04d", i)}, obj); err != nil {
		return 0, err
	}
	delete(obj.Spec.PodLabels, removeKey)
	dep, err := inferenceservice.Deployment(obj, inferenceservice.Inputs{Replicas: ptr.To[int32](1)})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := c.Apply(ctx, dep, client.FieldOwner(ownership.DefaultFieldManager), client.ForceOwnership); err != nil {
		return 0, err
	}
	return b.waitLabelGone(ctx, client.ObjectKeyFromObject(obj), start)
}

func (b *bench) waitLabelGone(ctx context.Context, key client.ObjectKey, start time.Time) (time.Duration, error) {
	dep := &appsv1.Deployment{}
	for {
		if err := b.observer.Get(ctx, key, dep, client.UnsafeDisableDeepCopy); err == nil {
			if _, ok := dep.Spec.Template.Labels[removeKey]; !ok {
				return time.Since(start), nil
			}
		}
		if time.Since(start) > time.Minute {
			return 0, fmt.Errorf("%s still has %s after a minute", key, removeKey)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(500 * time.Microsecond):
		}
	}
}

// waitConverged waits until every InferenceService of ns has its Deployment, its Service and a
// current observedGeneration, as seen by the observer's watches.
//
// Note: it counts from the watch events, not by listing the cache. A list of every object every
// few milliseconds costs this process CPU in proportion to N for as long as the wait lasts, and
// the operator's phase waits through its whole convergence where a floor's phase waits after its
// window: at N=5000 that was 9 ms of CPU per object taken from the API server's two cores, in
// the operator's phase only.
func (b *bench) waitConverged(ctx context.Context, ns string, n int, timeout time.Duration) error {
	converged := func(o client.Object) bool {
		is, ok := o.(*inferencev1alpha1.InferenceService)
		return ok && is.Status.ObservedGeneration == is.Generation
	}
	return b.waitCounted(ctx, ns, n, timeout, []countedKind{
		{"deployments", &appsv1.Deployment{}, exists},
		{"services", &corev1.Service{}, exists},
		{"inferenceservices", &inferencev1alpha1.InferenceService{}, converged},
	})
}

// countedKind is one kind waitCounted counts: the objects of it for which counts holds.
type countedKind struct {
	name   string
	obj    client.Object
	counts func(client.Object) bool
}

func exists(client.Object) bool { return true }

// waitCounted waits until, for every kind, n objects of ns count, as seen by the observer's
// watches (waitConverged's note says why from watch events).
func (b *bench) waitCounted(ctx context.Context, ns string, n int, timeout time.Duration, kinds []countedKind) error {
	var mu sync.Mutex
	// Per kind, the names of ns that count.
	counted := map[string]map[string]bool{}
	done := make(chan struct{})
	var closed bool
	track := func(kind string, counts func(client.Object) bool) toolscache.ResourceEventHandler {
		counted[kind] = map[string]bool{}
		set := func(obj any, in bool) {
			o, ok := obj.(client.Object)
			if !ok {
				// A delete whose last state the watch missed.
				if t, isTomb := obj.(toolscache.DeletedFinalStateUnknown); isTomb {
					o, ok = t.Obj.(client.Object)
				}
				if !ok {
					return
				}
			}
			if o.GetNamespace() != ns {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if in {
				counted[kind][o.GetName()] = true
			} else {
				delete(counted[kind], o.GetName())
			}
			for _, names := range counted {
				if len(names) < n {
					return
				}
			}
			if !closed {
				closed = true
				close(done)
			}
		}
		return toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { set(obj, counts(obj.(client.Object))) },
			UpdateFunc: func(_, obj any) { set(obj, counts(obj.(client.Object))) },
			DeleteFunc: func(obj any) { set(obj, false) },
		}
	}
	// Every kind is in counted before the first event can arrive.
	handlers := make([]toolscache.ResourceEventHandler, len(kinds))
	for i, k := range kinds {
		handlers[i] = track(k.name, k.counts)
	}
	for i, k := range kinds {
		inf, err := b.observer.GetInformer(ctx, k.obj)
		if err != nil {
			return err
		}
		reg, err := inf.AddEventHandler(handlers[i])
		if err != nil {
			return err
		}
		defer func() { _ = inf.RemoveEventHandler(reg) }()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(timeout):
		mu.Lock()
		defer mu.Unlock()
		var got []string
		for _, k := range kinds {
			got = append(got, fmt.Sprintf("%d %s", len(counted[k.name]), k.name))
		}
		return fmt.Errorf("timed out after %s: %s counted of %d", timeout, strings.Join(got, ", "), n)
	}
}

// poll calls f every 20 ms until it holds.
//
// Note: not more often: listing thousands of objects from the cache every few milliseconds would
// take CPU from the API server the benchmark measures.
func poll(ctx context.Context, timeout time.Duration, f func() bool) error {
	return pollEvery(ctx, timeout, 20*time.Millisecond, f)
}

func pollEvery(ctx context.Context, timeout, interval time.Duration, f func() bool) error {
	deadline := time.Now().Add(timeout)
	for !f() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return nil
}

// settle waits until no reconcile has finished for quiet.
func settle(ctx context.Context, quiet time.Duration) error {
	return poll(ctx, 2*time.Minute, func() bool {
		start := reconciles("inferenceservice")
		time.Sleep(quiet)
		return reconciles("inferenceservice") == start
	})
}

// operatorRun is the operator's wiring (controllers.Setup, and the binary's cache options) in
// this process, with every request counted.
type operatorRun struct {
	once    sync.Once
	counter *counter
	cancel  context.CancelFunc
	done    chan struct{}
}

func startOperator(ctx context.Context, cfg *rest.Config, ns string, o Options) (*operatorRun, error) {
	op := &operatorRun{counter: newCounter(), done: make(chan struct{})}
	restCfg := rest.CopyConfig(cfg)
	restCfg.QPS, restCfg.Burst, restCfg.UserAgent = o.QPS, o.Burst, "llmkube-operator-bench"
	restCfg.WrapTransport = op.counter.wrap
	cacheOpts, err := cacheOptions(o.CacheTransform, ns)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:     testenv.Scheme(),
		Cache:      cacheOpts,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	if err := controllers.Setup(mgr, controllers.Config{
		FieldManager:            ownership.DefaultFieldManager,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		Namespaces:              []string{ns},
	}); err != nil {
		return nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	op.cancel = cancel
	go func() {
		defer close(op.done)
		if err := mgr.Start(mctx); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("operator cache did not sync")
	}
	return op, nil
}

func (op *operatorRun) stop() {
	op.once.Do(func() {
		op.cancel()
		<-op.done
	})
}

// memory measures the heap an informer cache of the operator's kinds holds in namespace ns with
// each transform.
func (b *bench) memory(ctx context.Context, ns string, n int) (*Memory, error) {
	b.logf("N=%d memory", n)
	b.stopObserver()
	// The stopped observer's and operator's informers are garbage once their goroutines are gone.
	time.Sleep(time.Second)
	runtime.GC()
	mem := &Memory{N: n, CacheHeap: map[string]uint64{}}
	for _, t := range []string{controllers.CacheTransformNone, controllers.CacheTransformSafe, StripAll} {
		h, err := cacheHeap(ctx, b.cfg, ns, t)
		if err != nil {
			return nil, err
		}
		mem.CacheHeap[t] = h
	}
	return mem, nil
}

// StripAll is a transform only the benchmark knows: every managedFields entry dropped from the
// cache, which the operator's owned-equals-desired check cannot work without. `-cache-transform
// strip-all-managed-fields` shows what that costs in writes.
const StripAll = "strip-all-managed-fields"

func cacheOptions(t, ns string) (cache.Options, error) {
	if t == StripAll {
		return cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: cache.TransformStripManagedFields()}, nil
	}
	return controllers.CacheOptions(t, []string{ns})
}

// cacheHeap starts a cache of the kinds the operator watches in ns with transform t, and returns
// the heap it holds once synced.
func cacheHeap(ctx context.Context, cfg *rest.Config, ns, t string) (uint64, error) {
	opts, err := cacheOptions(t, ns)
	if err != nil {
		return 0, err
	}
	opts.Scheme = testenv.Scheme()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	c, err := cache.New(cfg, opts)
	if err != nil {
		return 0, err
	}
	for _, obj := range []client.Object{&inferencev1alpha1.InferenceService{}, &inferencev1alpha1.ModelRouter{}, &appsv1.Deployment{}, &corev1.Service{}, &corev1.ConfigMap{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return 0, err
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(cctx) }()
	// The stopped cache is garbage before the next measurement starts.
	defer func() { cancel(); <-done; time.Sleep(200 * time.Millisecond); runtime.GC() }()
	if !c.WaitForCacheSync(ctx) {
		return 0, fmt.Errorf("cache did not sync")
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	if after.HeapAlloc < before.HeapAlloc {
		return 0, nil
	}
	return after.HeapAlloc - before.HeapAlloc, nil
}

// reconciles is how many reconciles of the controller have finished in this process, from
// controller-runtime's metric.
func reconciles(controller string) float64 {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0
	}
	var total float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

func perRec(requests, reconciles int) float64 {
	if reconciles == 0 {
		return 0
	}
	return float64(requests) / float64(reconciles)
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s)-1) + 0.5)
	return s[min(i, len(s)-1)]
}

func vmRSS() uint64 { return rssFrom("/proc/self/status") }

func rssFrom(path string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// Machine describes where the run happened.
func Machine() string {
	mem := "?"
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				mem = fmt.Sprintf("%.0f GiB", kb/1024/1024)
			}
		}
	}
	return fmt.Sprintf("%d cores, %s, %s/%s, %s", runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
	}
}

// deleteServices deletes the Services of ns once a phase no longer needs them.
//
// Note: the API server's cost of creating a Service grows with the number of Services that
// exist (measured: a Service apply took 0.8 s on average with about 13000 Services against 9 ms for
// a Deployment apply), so every phase would pay for the Services of the phases before it, and
// the later of two compared phases would lose. Each phase therefore removes its Services when it
// is done, and the compared phases start from the same count.
func (b *bench) deleteServices(ctx context.Context, ns string) error {
	if b.disposable {
		// The plane is thrown away after the phase: no later phase pays for these Services.
		return nil
	}
	var svcs corev1.ServiceList
	if err := b.user.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
		return err
	}
	return parallel(len(svcs.Items), b.o.Workers, func(i int) error {
		return client.IgnoreNotFound(b.user.Delete(ctx, &svcs.Items[i]))
	})
}
