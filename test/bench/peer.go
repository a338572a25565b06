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
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// The two operators of a peer run.
const (
	// PeerOperator is this operator's binary.
	PeerOperator = "operator"
	// PeerLLMKube is LLMKube v0.9.19's operator (../shared/peers/llmkube/build.sh), the one this
	// project replaces.
	PeerLLMKube = "llmkube"
)

// PeerOptions of a peer run (Peer).
type PeerOptions struct {
	Ns []int
	// Repeat is how many times every N is measured; the order of the operators alternates.
	Repeat int
	// OperatorBinary is this operator; PeerDir the folder build.sh prints (manager, crd/).
	OperatorBinary string
	PeerDir        string
	// Settings are this operator's client and concurrency flags (LLMKube's run at its defaults).
	Settings       Settings
	CacheTransform string
	// Workers is how many goroutines apply the manifests.
	Workers int
	// Steady is the window of steady state after the convergence (nothing applied).
	Steady time.Duration
	// APIServerProfile profiles the API server's CPU over every convergence into ProfileDir.
	APIServerProfile bool
	ProfileDir       string
	Log              io.Writer `json:"-"`
}

// PeerResult is one peer run.
type PeerResult struct {
	Command string       `json:"command,omitempty"`
	Machine string       `json:"machine"`
	Load    string       `json:"load"`
	Options PeerOptions  `json:"options"`
	Runs    []PeerRun    `json:"runs"`
	Started time.Time    `json:"started"`
	Took    jsonDuration `json:"took"`
}

// PeerRun is one repeat at one N: both operators, each on its own control plane.
type PeerRun struct {
	N      int         `json:"n"`
	Repeat int         `json:"repeat"`
	Order  []string    `json:"order"`
	Phases []PeerPhase `json:"phases"`
}

// PeerPhase is one operator on a fresh control plane with its own CRDs: it converges N Model and
// InferenceService pairs, is left alone for the steady window, and is restarted over them.
type PeerPhase struct {
	Name string `json:"name"`
	Load string `json:"load"`
	// Converged is from the first apply until every Deployment and Service exists.
	Converged jsonDuration `json:"converged"`
	// Converge is that window: its requests, 404 answers and CPU.
	Converge PeerWindow `json:"converge"`
	// After is from then until the operator wrote nothing for peerQuiet (the status writes that
	// follow the last create), at most peerAfter.
	After  PeerWindow `json:"afterConverged"`
	Steady PeerWindow `json:"steady"`
	// Restart is from the new process's start until it is quiet (peerSettled).
	Restart PeerWindow `json:"restart"`
	// APIServerProfile is the API server's CPU profile over the convergence.
	APIServerProfile    string `json:"apiserverProfile,omitempty"`
	APIServerProfileTop string `json:"apiserverProfileTop,omitempty"`
}

// PeerWindow is what the operator's user sent in a window, as the audit log has it, and the
// CPU of the operator, the API server and etcd over it.
type PeerWindow struct {
	Took     jsonDuration   `json:"took"`
	Requests map[string]int `json:"requests"`
	NotFound map[string]int `json:"notFound,omitempty"`
	CPU      CPU            `json:"cpu"`
}

// Writes are the window's requests that can change something.
func (w PeerWindow) Writes() int { return writes(w.Requests) }

// Total is every request of the window.
func (w PeerWindow) Total() int {
	r, wr := split(w.Requests)
	return r + wr
}

// peerQuiet ends the window after the convergence: no write by the operator for this long.
const peerQuiet = 2 * time.Second

// peerAfter is the longest window after the convergence: an operator that keeps writing is
// measured further by the steady window.
const peerAfter = 30 * time.Second

// peerSettled ends the restart window: no write for this long (or, when the restart wrote
// nothing, no request at all).
const peerSettled = 10 * time.Second

// peerOrder alternates which operator runs first.
func peerOrder(repeat int) []string { return alternating(repeat, PeerOperator, PeerLLMKube) }

// Peer runs this operator and LLMKube's on the same manifests, each on a fresh control plane.
func Peer(ctx context.Context, po PeerOptions) (*PeerResult, error) {
	if po.Log == nil {
		po.Log = io.Discard
	}
	if po.OperatorBinary == "" || po.PeerDir == "" {
		return nil, errors.New("the peer run needs the operator binary and LLMKube's build folder")
	}
	po.Repeat = max(po.Repeat, 1)
	res := &PeerResult{Options: po, Started: time.Now().UTC(), Machine: Machine(), Load: loadAverage()}
	for _, n := range po.Ns {
		for r := range po.Repeat {
			run := PeerRun{N: n, Repeat: r, Order: peerOrder(r)}
			for _, name := range run.Order {
				ph, err := peerPhase(ctx, po, name, n, r)
				if err != nil {
					return nil, fmt.Errorf("N=%d repeat %d %s: %w", n, r, name, err)
				}
				run.Phases = append(run.Phases, *ph)
			}
			res.Runs = append(res.Runs, run)
		}
	}
	res.Load += " → " + loadAverage()
	res.Took = jsonDuration(time.Since(res.Started))
	return res, nil
}

// Phase is the run's phase of that operator (the zero phase when missing).
func (r PeerRun) Phase(name string) PeerPhase {
	for _, p := range r.Phases {
		if p.Name == name {
			return p
		}
	}
	return PeerPhase{}
}

// peerPhase starts a control plane with the operator's CRDs and an audit log of the operator's
// user, and measures the operator on it.
func peerPhase(ctx context.Context, po PeerOptions, name string, n, repeat int) (*PeerPhase, error) {
	dir, err := os.MkdirTemp("", "bench-peer-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	audit, err := newAuditLog(dir, operatorUser)
	if err != nil {
		return nil, err
	}
	o := Options{
		Workers: po.Workers, OperatorBinary: po.OperatorBinary, CacheTransform: po.CacheTransform, ProfileDir: po.ProfileDir, Log: po.Log,
		plane: planeOptions{audit: audit, observe: []client.Object{&appsv1.Deployment{}, &corev1.Service{}}},
	}
	if name == PeerLLMKube {
		o.plane.crds = filepath.Join(po.PeerDir, "crd")
	}
	b, stop, err := startPlane(ctx, o)
	if err != nil {
		return nil, err
	}
	defer stop()
	b.disposable = true
	if err := b.peerWarmUp(ctx); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	b.quiet(ctx, 0.2, 10*time.Second)
	ph := &PeerPhase{Name: name, Load: loadAverage()}
	const ns = "pairs"
	if err := b.namespace(ctx, ns); err != nil {
		return nil, err
	}
	start := func() (*process, error) {
		if name == PeerLLMKube {
			return b.startLLMKube(dir)
		}
		return b.startProcess(ctx, ns, po.Settings, po.CacheTransform)
	}
	p, err := start()
	if err != nil {
		return nil, err
	}
	defer func() { p.stop() }()
	if err := b.waitStarted(ctx, audit, 0); err != nil {
		return nil, fmt.Errorf("%s did not start: %w", name, err)
	}

	b.logf("N=%d %s: apply %d Model and InferenceService pairs", n, name, n)
	var apiProf *apiServerProfile
	if po.APIServerProfile {
		if apiProf, err = startAPIServerProfile(ctx, b.cfg); err != nil {
			return nil, err
		}
	}
	w := b.openAuditWindow(audit, p)
	if err := parallel(n, b.o.Workers, func(i int) error {
		for _, obj := range pairManifests(ns, i) {
			if err := b.user.Patch(ctx, obj, client.Apply, client.FieldOwner("gitops"), client.ForceOwnership); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := b.waitCounted(ctx, ns, n, 20*time.Minute, []countedKind{
		{"deployments", &appsv1.Deployment{}, exists}, {"services", &corev1.Service{}, exists},
	}); err != nil {
		return nil, err
	}
	convergedAt := time.Now()
	ph.Converged = jsonDuration(convergedAt.Sub(w.start))
	if ph.Converge, err = w.close(convergedAt); err != nil {
		return nil, err
	}
	// What the operator still writes once everything exists (status): until it is quiet.
	w.start, w.cpu = convergedAt, b.cpu.mark(p.pid())
	if ph.After, err = w.untilQuiet(ctx, peerQuiet, false, peerAfter); err != nil {
		return nil, err
	}
	if apiProf != nil {
		ph.APIServerProfile = filepath.Join(po.ProfileDir, fmt.Sprintf("peer-apiserver-%d-%d-%s.pprof", n, repeat, name))
		if err := apiProf.stop(ph.APIServerProfile); err != nil {
			return nil, fmt.Errorf("the API server's profile: %w", err)
		}
		ph.APIServerProfileTop = pprofTop(apiServerBinary(), ph.APIServerProfile)
	}
	b.logf("N=%d %s converged in %s: %d requests, %d writes, API server CPU %s", n, name, ph.Converged, ph.Converge.Total(), ph.Converge.Writes(), ph.Converge.CPU.APIServer)

	// Steady state: nothing changes for the window; whatever the operator sends is its own.
	w = b.openAuditWindow(audit, p)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(po.Steady):
	}
	if ph.Steady, err = w.close(time.Now()); err != nil {
		return nil, err
	}
	b.logf("N=%d %s steady %s: %d requests", n, name, po.Steady, ph.Steady.Total())

	// Restart over the converged pairs.
	p.stop()
	from := audit.offset()
	llmkubeLog := filepath.Join(dir, llmkubeLogName)
	logFrom := fileSize(llmkubeLog)
	if p, err = start(); err != nil {
		return nil, err
	}
	w = b.openAuditWindow(audit, p)
	w.from, w.start = from, p.started
	if name == PeerLLMKube {
		// LLMKube's first write can come later than peerSettled after its start (N=3000: its
		// caches take longer to fill), and a window closed before it measures nothing.
		if w.ready, err = workersStarted(ctx, llmkubeLog, logFrom, 5*time.Minute); err != nil {
			return nil, err
		}
	}
	if ph.Restart, err = w.untilQuiet(ctx, peerSettled, true, 5*time.Minute); err != nil {
		return nil, err
	}
	b.logf("N=%d %s restart: quiet after %s, %d requests, %d writes", n, name, ph.Restart.Took, ph.Restart.Total(), ph.Restart.Writes())
	return ph, nil
}

// pairManifests are the i-th Model and InferenceService, as a person applies them: the same
// documents for both operators (modelOf and pairOf, in LLMKube's own field names, which this
// API serves unchanged).
func pairManifests(ns string, i int) []*unstructured.Unstructured {
	gv := inferencev1alpha1.GroupVersion.String()
	doc := func(kind string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gv, "kind": kind,
			"metadata": map[string]any{"name": fmt.Sprintf("model-%04d", i), "namespace": ns},
			"spec":     spec,
		}}
	}
	m, s := modelOf(ns, i), pairOf(ns, i)
	return []*unstructured.Unstructured{
		doc("Model", map[string]any{"source": m.Spec.Source, "format": string(m.Spec.Format), "quantization": m.Spec.Quantization}),
		doc("InferenceService", map[string]any{
			"modelRef": s.Spec.ModelRef, "runtime": string(s.Spec.Runtime), "replicas": int64(*s.Spec.Replicas),
			"resources": map[string]any{"cpu": s.Spec.Resources.CPU.String(), "memory": s.Spec.Resources.Memory.String()},
			"podLabels": map[string]any{keepKey: "yes"},
		}),
	}
}

// peerWarmUp sends the API server a first request of every kind the phase writes, with no
// operator running, and removes what it wrote: a cold API server answers its first requests of
// a kind slowly, and neither operator should pay it (warmUp does it with this operator's types,
// which LLMKube's CRDs do not all accept).
func (b *bench) peerWarmUp(ctx context.Context) error {
	const ns = "warm-up"
	if err := b.namespace(ctx, ns); err != nil {
		return err
	}
	return parallel(20, b.o.Workers, func(i int) error {
		name := fmt.Sprintf("warm-%02d", i)
		labels := map[string]string{"app": name}
		objs := []client.Object{
			&appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
					},
				},
			},
			&corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(80)}}},
			},
		}
		for _, u := range pairManifests(ns, i) {
			objs = append(objs, u)
		}
		for _, obj := range objs {
			if err := b.user.Create(ctx, obj); err != nil {
				return err
			}
		}
		for _, obj := range objs {
			if err := b.user.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		return nil
	})
}

// llmkubeLogName is LLMKube's manager's log file, in the phase's folder.
const llmkubeLogName = "llmkube-manager.log"

// llmkubeWorkersStarted is controller-runtime's log line of LLMKube's InferenceService controller
// starting its workers, which it does once its caches are filled.
var llmkubeWorkersStarted = regexp.MustCompile(`Starting workers.*"controller": ?"inferenceservice"`)

// workersStarted waits until the log at path, from offset on, says LLMKube's InferenceService
// controller started its workers, and returns when it saw that.
func workersStarted(ctx context.Context, path string, offset int64, patience time.Duration) (time.Time, error) {
	var at time.Time
	err := pollEvery(ctx, patience, 200*time.Millisecond, func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer func() { _ = f.Close() }()
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return false
		}
		data, err := io.ReadAll(f)
		if err != nil || !llmkubeWorkersStarted.Match(data) {
			return false
		}
		at = time.Now()
		return true
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("LLMKube's InferenceService controller did not start its workers: %w", err)
	}
	return at, nil
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// startLLMKube runs LLMKube's manager as the operator's user, its log in dir, with the flags its
// README gives for a test API server (no webhooks, no leader election, metrics on loopback).
func (b *bench) startLLMKube(dir string) (*process, error) {
	log, err := os.OpenFile(filepath.Join(dir, llmkubeLogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(b.peerDir(), "manager"), "--metrics-bind-address=127.0.0.1:0", "--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:0", "--leader-elect=false", "--model-cache-path="+filepath.Join(dir, "cache"))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+b.kubeconfigPath)
	cmd.Stdout, cmd.Stderr = log, log
	p := &process{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, err
	}
	go func() { _ = cmd.Wait(); _ = log.Close(); close(p.exited) }()
	return p, nil
}

// peerDir is LLMKube's build folder: its CRDs' parent.
func (b *bench) peerDir() string { return filepath.Dir(b.o.plane.crds) }

// waitStarted waits until the operator's user has listed or watched InferenceServices and
// Models (its informers started) and then sent nothing for peerQuiet.
func (b *bench) waitStarted(ctx context.Context, audit *auditLog, from int64) error {
	listed := map[string]bool{}
	last := time.Now()
	err := pollEvery(ctx, 2*time.Minute, 200*time.Millisecond, func() bool {
		events, off, err := audit.since(from)
		if err != nil {
			return false
		}
		from = off
		for _, e := range events {
			listed[e.Key] = true
			last = time.Now()
		}
		seen := func(res string) bool { return listed["LIST "+res] || listed["WATCH "+res] }
		return seen("inferenceservices") && seen("models") && time.Since(last) > peerQuiet
	})
	if err != nil {
		return fmt.Errorf("%w (the audit log of %d bytes has %v)", err, audit.offset(), slices.Sorted(maps.Keys(listed)))
	}
	return nil
}

// auditWindow is a window of the operator's requests in the audit log, with the CPU over it.
type auditWindow struct {
	b     *bench
	audit *auditLog
	p     *process
	from  int64
	start time.Time
	cpu   cpuMark
	// ready, when set, is when the operator's workers started; untilQuiet's quiet period never
	// starts before it.
	ready time.Time
}

func (b *bench) openAuditWindow(audit *auditLog, p *process) *auditWindow {
	return &auditWindow{b: b, audit: audit, p: p, from: audit.offset(), start: time.Now(), cpu: b.cpu.mark(p.pid())}
}

// close counts the window's requests up to end (CPU up to now).
func (w *auditWindow) close(end time.Time) (PeerWindow, error) {
	return w.count(end, w.b.cpu.mark(w.p.pid()))
}

// count is the window's requests from its start up to end, with the CPU up to cpu.
func (w *auditWindow) count(end time.Time, cpu cpuMark) (PeerWindow, error) {
	events, _, err := w.audit.since(w.from)
	if err != nil {
		return PeerWindow{}, err
	}
	out := PeerWindow{Took: jsonDuration(end.Sub(w.start)), CPU: w.cpu.to(cpu)}
	out.Requests, out.NotFound = auditCounts(events, w.start, end)
	return out, nil
}

// untilQuiet closes the window at the operator's last write once quiet has passed without one
// (with anyRequest and no write in the window: its last request of any kind), at most after
// patience; the CPU is read at that last write, to the polling interval.
func (w *auditWindow) untilQuiet(ctx context.Context, quiet time.Duration, anyRequest bool, patience time.Duration) (PeerWindow, error) {
	from := w.from
	lastWrite, lastAny := w.start, w.start
	endCPU := w.b.cpu.mark(w.p.pid())
	wrote := false
	deadline := time.Now().Add(patience)
	for {
		select {
		case <-ctx.Done():
			return PeerWindow{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		events, off, err := w.audit.since(from)
		if err != nil {
			return PeerWindow{}, err
		}
		from = off
		for _, e := range events {
			if e.write() {
				wrote, lastWrite = true, e.At
			}
			if !strings.HasPrefix(e.Key, "WATCH ") {
				lastAny = e.At
			}
		}
		if len(events) > 0 {
			endCPU = w.b.cpu.mark(w.p.pid())
		}
		last := lastWrite
		if anyRequest && !wrote {
			last = lastAny
		}
		if last.Before(w.ready) {
			last = w.ready
		}
		if time.Since(last) > quiet || time.Now().After(deadline) {
			return w.count(last, endCPU)
		}
	}
}
