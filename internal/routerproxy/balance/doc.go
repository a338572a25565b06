/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package balance chooses the pod of a backend a request goes to: least outstanding requests
// among two random pods (power of two choices); for prefix affinity, the pod that was sent the
// longest prefix of the prompt's blocks (prefix scoring, with a per-pod LRU of block hashes), or
// for a session key consistent hashing, both within the bound of consistent hashing with bounded
// loads; and it ejects a pod that keeps failing for a cooldown. It knows nothing of
// Kubernetes or HTTP: a Pool is a set of addresses with counters, updated from the outside
// (internal/routerproxy/endpoints) and read by the proxy on every attempt.
package balance
