/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Step is what the operator was doing for one object when it failed.
type Step string

// The steps of syncing one object.
const (
	// StepRead is reading the live object (from the cache).
	StepRead Step = "reading the live object"
	// StepExtract is reading what the field manager owns from the live object's managedFields.
	StepExtract Step = "reading the fields the operator owns"
	// StepMigrate is the one-time migration of legacy ownership.
	StepMigrate Step = "migrating legacy ownership"
	// StepGate is the rollout gate deciding whether the pod template may roll.
	StepGate Step = "rollout gate"
	// StepBuild is computing the desired object from the spec.
	StepBuild Step = "building the desired object"
	// StepApply is the server-side apply itself.
	StepApply Step = "apply"
	// StepHeld is an object not applied because an object it needs was not (plan.Held): its
	// error unwraps to that object's.
	StepHeld Step = "not applied"
)

// Failure is one step that failed for one object. Its message names the object's kind and
// namespace/name and the step, so a status condition or Event says what failed where: only an
// apply the API server answered with an error is "rejected by the API server".
type Failure struct {
	Kind string
	Key  client.ObjectKey
	Step Step
	Err  error
}

func (f *Failure) Error() string {
	step := string(f.Step)
	if f.Step == StepApply {
		step = "apply failed"
		if Refused(f.Err) {
			step = "apply rejected by the API server"
		}
	}
	msg := fmt.Sprintf("%s %s: %s: %v", f.Kind, f.Key, step, f.Err)
	if hint := permissionHint(f.Err); hint != "" {
		msg += "; " + hint
	}
	return msg
}

func (f *Failure) Unwrap() error { return f.Err }

// Fail wraps err (when not nil) as a Failure of step on the object of kind named key. An err that
// is a Failure already names its object and step and is returned as it is.
func Fail(kind string, key client.ObjectKey, step Step, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Failure); ok {
		return err
	}
	return &Failure{Kind: kind, Key: key, Step: step, Err: err}
}

// Refused says whether err is the API server refusing a write: validation (Invalid, BadRequest),
// size, admission (a ValidatingAdmissionPolicy or webhook, a quota) or authorization (Forbidden).
// The same request succeeds only once something outside the spec changes (a policy is deleted,
// a role granted, a legacy co-owner migrated) or the spec does, so it is retried on a capped
// backoff and reported, never in a fast loop; anything else (a conflict, a timeout, an API server
// away) is transient and goes back to the work queue's own retry.
//
// An object the operator does not control (NotControlled) is refused too: it is the operator's
// own refusal, and it holds until that object is deleted or renamed.
func Refused(err error) bool {
	return IsNotControlled(err) || apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsForbidden(err)
}

// AllRefused says whether every error in errs is refused (see Refused).
func AllRefused(errs []error) bool {
	for _, err := range errs {
		if !Refused(err) {
			return false
		}
	}
	return true
}

// permissionHint names the permission a Forbidden answer of the OwnerReferencesPermissionEnforcement
// admission plugin is about: its message does not say which resource it wanted.
//
// Note: setting blockOwnerDeletion on an owner reference needs update on the owner's finalizers
// subresource when that plugin is on (it is by default on OpenShift); the chart's role grants it.
func permissionHint(err error) string {
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "blockOwnerDeletion") {
		return ""
	}
	return "the operator's role needs update on inferenceservices/finalizers and modelrouters/finalizers (API group inference.llmkube.dev) to set blockOwnerDeletion on owner references"
}
