/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestApplyKeepsTenPercentHeadroom(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOMEMLIMIT", "536870912")
	if c, set := Apply(); c != 512<<20 || set != 536870912/10*9 {
		t.Fatalf("Apply() = %d, %d; want the container's 512 MiB and 90%% of it", c, set)
	}
	if got := debug.SetMemoryLimit(-1); got != 536870912/10*9 {
		t.Errorf("runtime memory limit %d, want %d", got, 536870912/10*9)
	}
}

func TestApplyLeavesAUnitAlone(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "200MiB")
	if c, set := Apply(); c != 0 || set != 0 {
		t.Errorf("Apply() = %d, %d for 200MiB; the runtime honours a value with a unit itself", c, set)
	}
}
