/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package retry decides what a reconcile returns after its failures: a refused write waits on a
// capped backoff of its own, anything else goes back to the work queue's retry.
package retry

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/llmkube/operator/controllers/ownership"
)

// Backoff bounds of a refused write's retries: the first after First, doubling up to Cap.
const (
	First = 5 * time.Second
	Cap   = 40 * time.Second
)

// Refused retries reconciles whose writes the API server refused, per object, on an exponential
// backoff from First to Cap.
//
// Note: a refusal can heal without a spec change (an admission policy or webhook that stops
// denying, a quota raised, a role granted, a legacy co-owner migrated), so it is never given up;
// but the same request would be refused again at once, so it is not retried in a fast loop
// either. With Cap at 40 s, a write lands within about 40 s of its cause going away; the Warning
// Event stays one per new rejection (controllers/status), however often the write is retried.
type Refused struct {
	limiter workqueue.TypedRateLimiter[ctrl.Request]
	// Resync is how often an object that converged is reconciled again (jittered by up to 10%),
	// to repair drift no watch event carries; DefaultResync when zero, never when negative.
	Resync time.Duration
}

// DefaultResync bounds how long drift that no event carries (a missed or filtered event, a cache
// that lagged) stays unrepaired. A resync of an object that did not drift is a no-op reconcile:
// it reads the cache and sends nothing (0 reads, 0 writes per reconcile in `make bench`).
const DefaultResync = 10 * time.Minute

// NewRefused returns the backoff of refused writes.
func NewRefused() *Refused {
	return &Refused{limiter: workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](First, Cap)}
}

// shared serves a reconciler built without SetupWithManager (a test driving Reconcile).
var shared = NewRefused()

// Result is what the reconcile of req returns after failures (nil or empty when everything was
// applied): nothing, a RequeueAfter on the backoff when every failure is a refusal, or the
// failures as the error (the work queue retries them with its own backoff). A nil r uses a
// backoff shared by the process.
func (r *Refused) Result(req ctrl.Request, failures []error) (ctrl.Result, error) {
	if r == nil {
		r = shared
	}
	if len(failures) == 0 {
		r.limiter.Forget(req)
		return ctrl.Result{RequeueAfter: r.resync()}, nil
	}
	if !ownership.AllRefused(failures) {
		return ctrl.Result{}, errors.Join(failures...)
	}
	return ctrl.Result{RequeueAfter: r.limiter.When(req)}, nil
}

func (r *Refused) resync() time.Duration {
	switch {
	case r.Resync < 0:
		return 0
	case r.Resync == 0:
		return wait.Jitter(DefaultResync, 0.1)
	}
	return wait.Jitter(r.Resync, 0.1)
}
