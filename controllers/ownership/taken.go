/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"reflect"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// takenNames are the object names a create found taken, or made taken, while the cache did not
// show the object: per namespace/name, the kinds (the Go types of their apply configurations).
//
// Sync reads such a name past the cache instead of sending a create: a create the API server
// refuses costs a write request and the read anyway, on every resync of an object the cache
// cannot see (a user's or a legacy object, one whose label was removed), and after the operator's
// own create until the cache shows it.
type takenNames struct {
	mu    sync.Mutex
	names map[client.ObjectKey]map[reflect.Type]struct{}
}

func (t *takenNames) remember(desired any, key client.ObjectKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names == nil {
		t.names = map[client.ObjectKey]map[reflect.Type]struct{}{}
	}
	if t.names[key] == nil {
		t.names[key] = map[reflect.Type]struct{}{}
	}
	t.names[key][reflect.TypeOf(desired)] = struct{}{}
}

func (t *takenNames) has(desired any, key client.ObjectKey) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.names[key][reflect.TypeOf(desired)]
	return ok
}

func (t *takenNames) forget(desired any, key client.ObjectKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kinds := t.names[key]; kinds != nil {
		delete(kinds, reflect.TypeOf(desired))
		if len(kinds) == 0 {
			delete(t.names, key)
		}
	}
}

// forgetName forgets key for every kind: its delete event carries no apply configuration type.
// Forgetting a kind whose object is still there costs one refused create, which remembers it again.
func (t *takenNames) forgetName(key client.ObjectKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.names, key)
}

// RememberTaken remembers that key, of desired's kind, is taken by an object the cache may not
// show. Nil remembers nothing.
func (w *OwnWrites) RememberTaken(desired any, key client.ObjectKey) {
	if w != nil {
		w.taken.remember(desired, key)
	}
}

// Taken says whether key, of desired's kind, was remembered taken and not forgotten since.
func (w *OwnWrites) Taken(desired any, key client.ObjectKey) bool {
	return w != nil && w.taken.has(desired, key)
}

// ForgetTaken forgets key of desired's kind: the cache shows it, or a read found the name free.
func (w *OwnWrites) ForgetTaken(desired any, key client.ObjectKey) {
	if w != nil {
		w.taken.forget(desired, key)
	}
}
