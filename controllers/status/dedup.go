/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"encoding/json"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
)

// Writes remembers, per object, the last status this process wrote and the resourceVersion of the
// object it was computed from, until the cache has moved past that object. Both reconcilers use it.
//
// Note: when the cache still holds the exact object (resourceVersion) the last status write was
// computed from, that write has not reached the cache yet: comparing with the stale status would
// send the same status again (with a new lastTransitionTime). So a status equal to that last write
// (times aside) is not sent again; a different one is. It does not wait for the write's own watch
// event, which the reconcilers filter out (status-only updates do not reconcile). This took
// convergence from 1.04-1.5 status writes per object to 1.
type Writes struct {
	last sync.Map // client.ObjectKey -> write
}

type write struct {
	from   string
	status []byte
}

// Pending says whether desired (an apply configuration of the whole object) is what this process
// last wrote for key from the object at resourceVersion from, so that sending it again is
// pointless. It returns the fingerprint to Record after a write.
func (w *Writes) Pending(key client.ObjectKey, from string, desired any) (bool, []byte, error) {
	fp, err := fingerprint(desired)
	if err != nil {
		return false, nil, err
	}
	v, ok := w.last.Load(key)
	if !ok {
		return false, fp, nil
	}
	last := v.(write)
	if last.from != from {
		w.last.Delete(key)
		return false, fp, nil
	}
	return string(last.status) == string(fp), fp, nil
}

// Record notes that fp was written for key, computed from the object at resourceVersion from.
func (w *Writes) Record(key client.ObjectKey, from string, fp []byte) {
	w.last.Store(key, write{from: from, status: fp})
}

// Forget drops what is remembered of key (the object is gone).
func (w *Writes) Forget(key client.ObjectKey) { w.last.Delete(key) }

// fingerprint is desired's status without the conditions' lastTransitionTime, which a status
// computed from a stale object sets anew each second.
func fingerprint(desired any) ([]byte, error) {
	obj, err := ownership.ToMap(desired)
	if err != nil {
		return nil, err
	}
	status, _ := obj["status"].(map[string]any)
	if conds, ok := status["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				delete(m, "lastTransitionTime")
			}
		}
	}
	return json.Marshal(status)
}

// Apply writes desired, the status wanted for o, when it differs from what the field manager owns
// (owned extracts it), and not again while the cache lags behind this process's last write of it.
// It says whether the write changed o.
//
// Note: the apply decodes the server's answer into desired; an unchanged resourceVersion means
// the write changed nothing.
func (w *Writes) Apply(ctx context.Context, a ownership.Applier, o client.Object, desired runtime.ApplyConfiguration, owned func() (any, error)) (bool, error) {
	key := client.ObjectKeyFromObject(o)
	pending, fp, err := w.Pending(key, o.GetResourceVersion(), desired)
	if err != nil || pending {
		return false, err
	}
	have, err := owned()
	if err != nil {
		return false, err
	}
	sent, err := a.ApplyIfChangedStatus(ctx, have, desired)
	if !sent || err != nil {
		return false, err
	}
	answer, ok := ownership.Answer(desired, &metav1.PartialObjectMetadata{})
	if !ok || answer.ResourceVersion == o.GetResourceVersion() {
		return false, nil
	}
	w.Record(key, o.GetResourceVersion(), fp)
	return true, nil
}
