/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/llmkube/operator/controllers"
)

// TestSmoke runs the whole benchmark at N=10, so that CI proves `make bench` still works and
// that a no-op reconcile still sends nothing. It asserts request counts, never wall-clock time.
func TestSmoke(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	binary := filepath.Join(t.TempDir(), "llmkube-operator")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, "github.com/llmkube/operator/cmd/operator")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	res, err := Main(ctx, Options{
		Ns: []int{10}, Rounds: 2, Removals: 3,
		QPS: 50, Burst: 100, MaxConcurrentReconciles: 4, CacheTransform: controllers.CacheTransformSafe, Workers: 4,
		OperatorBinary: binary, Unthrottled: Settings{QPS: -1, Concurrency: 4},
		ProfileN: 10, ProfileDir: t.TempDir(), UpgradeN: 10, RoutersN: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + Markdown(res))
	run := res.Runs[0]
	if run.SteadyReconciles < 2*run.N {
		t.Errorf("steady state: %d reconciles, want at least %d", run.SteadyReconciles, 2*run.N)
	}
	if len(run.SteadyRequests) != 0 {
		t.Errorf("steady state: no-op reconciles sent requests, want none: %v", run.SteadyRequests)
	}
	createdOnce(t, "converge", run.ConvergeRequests, run.N, "PATCH", "deployments", "services") // counted at the client: an apply is a PATCH
	// One status write per object; a reconcile that compares against a stale status sends more.
	if got := run.ConvergeRequests["PATCH inferenceservices/status"]; got > run.N+run.N/5 {
		t.Errorf("converge: %d status writes for %d objects, want about one each: %v", got, run.N, run.ConvergeRequests)
	}
	if run.UpdateWrites != 2 || run.UpdateReads != 2 {
		t.Errorf("read-modify-Update baseline: %.1f reads and %.1f writes per reconcile, want 2 and 2", run.UpdateReads, run.UpdateWrites)
	}
	if run.Removals != 3 || run.RemovalP50 <= 0 {
		t.Errorf("removal latency not measured: %+v", run)
	}
	if res.Memory == nil || res.Memory.CacheHeap[controllers.CacheTransformNone] == 0 || len(res.Memory.Process) != 2 {
		t.Errorf("memory not measured: %+v", res.Memory)
	}
	checkProcess(t, run)
	checkUpgrade(t, res.Upgrade)
	checkRouters(t, res.Routers)
}

// checkProcess: the operator process converges with one write of each kind per object, a no-op
// reconcile and a restart send nothing, and its CPU and the API server's were measured.
func checkProcess(t *testing.T, run Run) {
	t.Helper()
	p := run.Process
	if p == nil {
		t.Fatal("operator process not measured")
	}
	createdOnce(t, "process converge", p.Requests, run.N, "APPLY", "deployments", "services")
	if got := p.Requests["APPLY inferenceservices/status"]; got != run.N {
		t.Errorf("process converge: %d status applies, want one per object (%d): %v", got, run.N, p.Requests)
	}
	// One reconcile per object: the events of the operator's own writes do not bring a second.
	if p.Reconciles > run.N+run.N/5 {
		t.Errorf("process converge: %d reconciles for %d objects, want about one each", p.Reconciles, run.N)
	}
	if p.CPU.Operator <= 0 || p.CPU.APIServer <= 0 {
		t.Errorf("process converge: CPU not measured: %+v", p.CPU)
	}
	if p.NoOpReconciles < run.N || len(p.NoOpRequests) != 0 {
		t.Errorf("process no-op: %d reconciles (want at least %d) sent %v, want nothing", p.NoOpReconciles, run.N, p.NoOpRequests)
	}
	if p.ProfileTop == "" {
		t.Errorf("process converge: no CPU profile")
	}
	if r := p.Restart; r == nil || r.Reconciles < run.N || len(r.Requests) != 0 {
		t.Errorf("restart over converged objects: want every object reconciled and no request, got %+v", r)
	}
	// Proves F12.
	if m := p.Models; m == nil || m.Restart == nil || m.Restart.Reconciles < run.N || len(m.Restart.Requests) != 0 {
		t.Errorf("restart over converged Model and InferenceService pairs: want every Model reconciled and no request, got %+v", m)
	} else if m.StatusWritesPerModel > 1.2 {
		t.Errorf("pairs converge: %.2f Model status writes per Model, want one (Loading: a new Model waits model.Settle for the InferenceService that names it)", m.StatusWritesPerModel)
	}
}

// checkUpgrade: one ownership write per object the records-based operator wrote, one apply per
// object (the managed-by label), and a pod template change only where a recorded key was dropped.
func checkUpgrade(t *testing.T, u *Upgrade) {
	t.Helper()
	if u == nil {
		t.Fatal("upgrade not measured")
	}
	for _, k := range []string{"PATCH deployments", "PATCH services"} {
		if got := u.Requests[k]; got != u.N {
			t.Errorf("upgrade: %d ownership writes (%s), want one per object (%d): %v", got, k, u.N, u.Requests)
		}
	}
	// One apply of each object labels it as the operator's (app.kubernetes.io/managed-by, which
	// the operator's caches select on): object metadata only, so it rolls no pod. The Service,
	// which the plan does not read, costs one more: the create pinned to resourceVersion 1 that
	// the API server refuses, as the legacy Service holds the name, before it is read and migrated.
	for k, want := range map[string]int{"APPLY deployments": u.N, "APPLY services": 2 * u.N} {
		if got := u.Requests[k]; got != want {
			t.Errorf("upgrade: %d applies (%s), want %d, to add the managed-by label: %v", got, k, want, u.Requests)
		}
	}
	// One OwnershipMigrated Event per InferenceService for its Deployment and its Service together:
	// a second Event of the same reason would become a series, a POST and a PATCH per object.
	if ev := u.Requests["POST events"] + u.Requests["PATCH events"]; ev > u.N+u.N/20 {
		t.Errorf("upgrade: %d Event writes (%d POST, %d PATCH) for %d InferenceServices, want at most one each: %v",
			ev, u.Requests["POST events"], u.Requests["PATCH events"], u.N, u.Requests)
	}
	if u.Rolled != u.Dropped {
		t.Errorf("upgrade: %d pod templates changed, want only the %d with a dropped key", u.Rolled, u.Dropped)
	}
}

// checkRouters: one apply of each of a router's objects, and a no-op reconcile sends nothing.
func checkRouters(t *testing.T, r *Routers) {
	t.Helper()
	if r == nil {
		t.Fatal("routers not measured")
	}
	createdOnce(t, "routers", r.Converge.Requests, r.N, "APPLY", "configmaps", "deployments", "services")
	if got := r.Converge.Requests["APPLY modelrouters/status"]; got != r.N {
		t.Errorf("routers: %d status applies, want one per router (%d): %v", got, r.N, r.Converge.Requests)
	}
	if r.Converge.Reconciles > r.N+r.N/5 {
		t.Errorf("routers: %d reconciles for %d routers, want about one each", r.Converge.Reconciles, r.N)
	}
	if r.NoOp.Reconciles < r.N || len(r.NoOp.Requests) != 0 {
		t.Errorf("routers no-op: %d reconciles (want at least %d) sent %v, want nothing", r.NoOp.Reconciles, r.N, r.NoOp.Requests)
	}
}

// createdOnce: each object of each resource was created once as the operator creates (O19): one
// apply (apply: the verb it is counted as) pinned to resourceVersion "1", which creates the object
// or is refused when the name is taken (ownership/create.go); no POST and no other write.
func createdOnce(t *testing.T, phase string, requests map[string]int, n int, apply string, resources ...string) {
	t.Helper()
	for _, res := range resources {
		if got := requests[apply+" "+res]; got != n {
			t.Errorf("%s: %d %s %s, want one per object (%d): %v", phase, got, apply, res, n, requests)
		}
		for _, verb := range []string{"POST", "PATCH", "PUT"} {
			if got := requests[verb+" "+res]; verb != apply && got != 0 {
				t.Errorf("%s: %d %s %s, want none (an object is created by one pinned apply): %v", phase, got, verb, res, requests)
			}
		}
	}
}
