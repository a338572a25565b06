/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Main(ctx, Options{
		Ns: []int{10}, Rounds: 2, Removals: 3,
		QPS: 50, Burst: 100, MaxConcurrentReconciles: 4, CacheTransform: controllers.CacheTransformSafe, Workers: 4,
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
	for _, k := range []string{"PATCH deployments", "PATCH services"} {
		if got := run.ConvergeRequests[k]; got != run.N {
			t.Errorf("converge: %d %s, want one per object (%d): %v", got, k, run.N, run.ConvergeRequests)
		}
	}
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
	if res.Memory == nil || res.Memory.CacheHeap[controllers.CacheTransformNone] == 0 {
		t.Errorf("memory not measured: %+v", res.Memory)
	}
}
