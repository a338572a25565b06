/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package rollout is the gate in front of every pod-template change of an InferenceService with
// rolloutPolicy.waitForIdle: a roll waits until the runtime pods have no request in flight, or
// until idleTimeoutSeconds has passed and force allows it.
//
// The reconciler asks the gate only when the template the operator wants differs from the
// template its field manager owns, so the gate never depends on a hash annotation and never
// stops other tools' changes (kubectl rollout restart) or the operator's non-template changes.
package rollout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/runtimes"
)

// Reasons of the RolloutDeferred condition.
const (
	ReasonWaitingForIdle           = "WaitingForIdle"
	ReasonIdleTimeoutNotForced     = "IdleTimeoutNotForced"
	ReasonIdleDetectionUnsupported = "IdleDetectionUnsupported"
)

// PollInterval is the mean delay between two looks at a busy runtime; each is jittered by up to
// half of it so that many waiting InferenceServices do not ask in step.
const PollInterval = 5 * time.Second

// Decision is the gate's answer for one reconcile.
type Decision struct {
	// Roll lets the new template go out.
	Roll bool
	// Reason and Message explain a deferral, for the RolloutDeferred condition.
	Reason, Message string
	// RequeueAfter is when to look again while deferred.
	RequeueAfter time.Duration
	// Unreadable names the pods whose metrics could not be read (Load.Unreadable); the
	// reconciler reports them in a Warning Event too.
	Unreadable []string
}

// Gate decides whether a pod-template change may roll now.
type Gate struct {
	Prober *Prober
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Enabled says whether isvc asks for the gate at all.
func Enabled(isvc *inferencev1alpha1.InferenceService) bool {
	p := isvc.Spec.RolloutPolicy
	return p != nil && ptr.Deref(p.WaitForIdle, false)
}

// Decide answers for an InferenceService whose desired pod template differs from the owned one.
// waitingSince is when the current deferral began (nil when none has).
func (g *Gate) Decide(ctx context.Context, isvc *inferencev1alpha1.InferenceService, service, portName string, waitingSince *time.Time) (Decision, error) {
	d, err := g.decide(ctx, isvc, service, portName, waitingSince)
	if err == nil && d.Roll && waitingSince != nil {
		WaitSeconds.Observe(g.now().Sub(*waitingSince).Seconds())
	}
	return d, err
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Gate) decide(ctx context.Context, isvc *inferencev1alpha1.InferenceService, service, portName string, waitingSince *time.Time) (Decision, error) {
	if !Enabled(isvc) {
		return Decision{Roll: true}, nil
	}
	policy := isvc.Spec.RolloutPolicy
	force := ptr.Deref(policy.Force, false)
	runtime := isvc.Spec.Runtime
	if runtime == "" {
		runtime = inferencev1alpha1.RuntimeLlamaCPP
	}
	metric := runtimes.For(runtime).InFlightMetric
	if metric == "" {
		if force {
			return Decision{Roll: true}, nil
		}
		return Decision{
			Reason:       ReasonIdleDetectionUnsupported,
			Message:      fmt.Sprintf("runtime %s reports no in-flight gauge, so idleness cannot be seen; set rolloutPolicy.force to roll without it", runtime),
			RequeueAfter: wait.Jitter(PollInterval, 0.5),
		}, nil
	}

	load, err := g.Prober.Load(ctx, isvc.Namespace, service, portName, metric)
	if err != nil {
		return Decision{}, err
	}
	if load.Idle() {
		return Decision{Roll: true}, nil
	}

	now := g.now()
	requeue := wait.Jitter(PollInterval, 0.5)
	busy := fmt.Sprintf("%d of %d pods busy (%s)", load.Busy, load.Pods, metric)
	if len(load.Unreadable) > 0 {
		busy += "; metrics unreadable, counted busy: " + strings.Join(load.Unreadable, ", ")
	}
	if policy.IdleTimeoutSeconds != nil {
		timeout := time.Duration(*policy.IdleTimeoutSeconds) * time.Second
		start := now
		if waitingSince != nil {
			start = *waitingSince
		}
		if elapsed := now.Sub(start); elapsed >= timeout {
			if force {
				return Decision{Roll: true}, nil
			}
			return Decision{
				Reason:       ReasonIdleTimeoutNotForced,
				Message:      fmt.Sprintf("%s; idleTimeoutSeconds (%ds) passed and rolloutPolicy.force is off: still waiting for idle", busy, *policy.IdleTimeoutSeconds),
				RequeueAfter: requeue,
				Unreadable:   load.Unreadable,
			}, nil
		} else if left := timeout - elapsed; left < requeue {
			requeue = left
		}
	}
	return Decision{Reason: ReasonWaitingForIdle, Message: busy + "; the pod-template change waits for idle", RequeueAfter: requeue, Unreadable: load.Unreadable}, nil
}
