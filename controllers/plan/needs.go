/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
)

// This file is the one rule every kind's apply follows about what its objects depend on: an
// object that targets, selects, mounts, binds or routes to another planned object is applied only
// when that object was. A kind says what depends on what (Object.Needs, set where the plan is
// built); Run applies the rule. No kind decides it in its own reconciler.

// Ref names one planned object.
type Ref struct {
	Kind string
	Key  client.ObjectKey
}

func (r Ref) String() string { return r.Kind + " " + r.Key.String() }

// Ref is the object's own name.
func (o Object) Ref() Ref { return Ref{Kind: o.Kind, Key: o.Key} }

// Needing is o with refs added to what it needs: the planned objects it targets, selects, mounts,
// binds or routes to. An object of someone else's in one of their places would receive what o
// sends it (traffic, a mount, a binding), so o is applied only when each was.
func (o Object) Needing(refs ...Ref) Object {
	o.needs = append(append([]Ref(nil), o.needs...), refs...)
	return o
}

// Needs are the planned objects o needs (see Needing).
func (o Object) Needs() []Ref { return o.needs }

// Step is one write of a plan for Run.
type Step struct {
	// Object names the write and what it needs; its Desired may be nil for a step whose outcome
	// the plan decided already (Refused).
	Object Object
	// Send writes it; nil sends Object.Sync. An error means the object was not applied as planned.
	Send func(ctx context.Context) error
	// Refused is set when the plan decided already that the object is not applied (an object of
	// its name the owner does not control, read by the plan's Observe): Send is not called, and
	// the step counts as failed with this error.
	Refused error
}

// Held is why an object was not applied: Need, an object it needs, failed with Cause. It unwraps
// to Cause, so a hold is refused (retried on the refusal backoff) exactly when its cause is, and a
// status reads the cause's reason from it.
type Held struct {
	Need  Ref
	Cause error
}

func (h *Held) Error() string {
	return fmt.Sprintf("it needs %s, which was not applied (see its own error)", h.Need)
}

func (h *Held) Unwrap() error { return h.Cause }

// IsHeld says whether err is (or wraps) a Held.
func IsHeld(err error) bool {
	var h *Held
	return errors.As(err, &h)
}

// Withdraw removes o when the owner controls it (Object.DeleteControlled). Run calls it for an
// object held by a refusal: left in place, an object of the owner's would go on targeting,
// mounting or binding someone else's.
type Withdraw func(ctx context.Context, o Object) error

// Run sends steps in order (an object after those it needs) through a Runner and returns every
// failure (Runner.Do).
func Run(ctx context.Context, a ownership.Applier, r client.Reader, owner client.Object, steps []Step, withdraw Withdraw) []error {
	run := &Runner{Applier: a, Reader: r, Owner: owner, Withdraw: withdraw}
	for _, s := range steps {
		run.Do(ctx, s)
	}
	return run.Failures
}

// Runner applies one owner's steps, one at a time, remembering which failed: for a kind whose
// steps are sent from more than one place (an InferenceService's gateway objects after its
// workload), so that one rule decides them all.
type Runner struct {
	Applier  ownership.Applier
	Reader   client.Reader
	Owner    client.Object
	Withdraw Withdraw
	// Failures are every failure so far, in order, holds included.
	Failures []error

	failed map[Ref]error
}

// Do sends s unless one of its needs failed or was held: s then fails as Held, and when that
// cause is a refusal (ownership.NotControlled), Withdraw removes what the owner controls of it.
// A need that is not among the steps done so far needs nothing of this run. Do returns s's
// failure (nil when it was applied), which Failures holds too.
func (run *Runner) Do(ctx context.Context, s Step) error {
	if run.failed == nil {
		run.failed = map[Ref]error{}
	}
	ref := s.Object.Ref()
	var err error
	if need, cause, ok := firstFailed(s.Object.needs, run.failed); ok {
		err = ownership.Fail(ref.Kind, ref.Key, ownership.StepHeld, &Held{Need: need, Cause: cause})
		if run.Withdraw != nil && ownership.IsNotControlled(cause) {
			if werr := run.Withdraw(ctx, s.Object); werr != nil {
				run.Failures = append(run.Failures, ownership.Fail(ref.Kind, ref.Key, ownership.StepApply, werr))
			}
		}
	} else {
		switch {
		case s.Refused != nil:
			err = s.Refused
		case s.Send != nil:
			err = s.Send(ctx)
		default:
			err = s.Object.Sync(ctx, run.Applier, run.Reader, run.Owner)
		}
	}
	if err != nil {
		run.failed[ref] = err
		run.Failures = append(run.Failures, err)
	}
	return err
}

// Retract takes errs (as Do returned them) back out of Failures: a failure the caller decided is
// none (a kind whose CRD is gone, reported otherwise). What they held stays held.
func (run *Runner) Retract(errs ...error) {
	run.Failures = slices.DeleteFunc(run.Failures, func(f error) bool {
		return slices.ContainsFunc(errs, func(e error) bool { return e != nil && e == f })
	})
}

// firstFailed is the first of needs that failed, with its error.
func firstFailed(needs []Ref, failed map[Ref]error) (Ref, error, bool) {
	for _, n := range needs {
		if err, ok := failed[n]; ok {
			return n, err, true
		}
	}
	return Ref{}, nil, false
}

// Dependents are the refs of objs that need ref, directly or through another of objs, in the
// order of objs: what Run holds when ref fails. Tests and previews ask it of a plan's objects.
func Dependents(objs []Object, ref Ref) []Ref {
	down := map[Ref]bool{ref: true}
	var out []Ref
	for _, o := range objs {
		for _, n := range o.needs {
			if down[n] && !down[o.Ref()] {
				down[o.Ref()] = true
				out = append(out, o.Ref())
			}
		}
	}
	return out
}
