/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

// Normalize is the form in which the no-op check (OwnedEqualsDesired) compares an owned and a
// desired apply configuration. This file is the one place that lists what that check cannot see
// by itself, and so what it, or the builders of desired state, must smooth over:
//
//  1. Go structs against the wire: both sides go through JSON, so pointer-versus-value and
//     nil-versus-empty differences of the Go types do not count, only what an apply would send.
//     (Done here.)
//  2. metadata.resourceVersion is a precondition of the apply, not a field anyone owns: the
//     extraction never holds it, so it is dropped before comparing. The Deployment reconciler sets
//     it when it sends a spec.replicas value it read from the cache (see the replicas handover).
//     (Done here.)
//  3. Omitempty fields the extraction drops: a zero value the builder sends (readyReplicas: 0, a
//     status url or message "") is stored and extracted as absent, so owned and desired would
//     differ forever. The builders leave such fields out when they are zero (InferenceService and
//     ModelRouter status). Required fields without omitempty (a backend's resolved) are always
//     sent, as they are stored; so are a Model's counts, which kubectl get shows as 0: their Go
//     fields have no omitempty, or every Model with no ready InferenceService would be written
//     again on each restart.
//  4. Defaults the API server fills in (imagePullPolicy, terminationMessagePath, protocol, ...)
//     belong to nobody's apply and so are absent from the extraction: never compare with the live
//     object, only with the extraction (OwnedEqualsDesired's contract).
//  5. Condition lastTransitionTime: a status computed from a stale object sets it anew; the
//     builders keep it while the condition's status stays the same (meta.SetStatusCondition), and
//     the status write deduplication ignores it (controllers/status, Writes).
func Normalize(v any) (map[string]any, error) {
	out, err := ToMap(v)
	if err != nil {
		return nil, err
	}
	if md, ok := out["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
	}
	return out, nil
}
