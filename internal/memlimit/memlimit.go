/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package memlimit sets the Go runtime's memory limit from the container's, for the operator and
// the router-proxy alike.
package memlimit

import (
	"os"
	"runtime/debug"
	"strconv"
)

// Apply lowers GOMEMLIMIT to 90% when it is a plain byte count, and returns the container's limit
// and the limit set (both 0 when it did nothing).
//
// Note: the Deployments set GOMEMLIMIT to the container's memory limit (resourceFieldRef
// limits.memory, a plain byte count); the runtime needs headroom for what its limit does not
// count (stacks not yet freed, the kernel's page cache of the binary) to collect before the kernel
// kills it rather than after. A value with a unit (200MiB) is a person's choice and the runtime
// already honours it as it is.
func Apply() (container, set int64) {
	n, err := strconv.ParseInt(os.Getenv("GOMEMLIMIT"), 10, 64)
	if err != nil || n <= 0 {
		return 0, 0
	}
	set = n / 10 * 9
	debug.SetMemoryLimit(set)
	return n, set
}
