/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestConflictManagersAreBounded(t *testing.T) {
	// Other tests of the package take back fields too: start from no manager seen.
	ConflictsTotal.Reset()
	conflictManagers.Lock()
	conflictManagers.seen = map[string]bool{}
	conflictManagers.Unlock()
	for i := range 3 * maxConflictManagers {
		countConflicts("Deployment", []Conflict{{Path: ".spec.replicas", Managers: []string{fmt.Sprintf("writer-%d (Update)", i)}}})
	}
	if n := testutil.CollectAndCount(ConflictsTotal); n > maxConflictManagers+1 {
		t.Fatalf("%d manager series, want at most %d plus %q", n, maxConflictManagers, OtherManager)
	}
	if v := testutil.ToFloat64(ConflictsTotal.WithLabelValues("Deployment", OtherManager)); v != 2*maxConflictManagers {
		t.Fatalf("other = %v, want %d", v, 2*maxConflictManagers)
	}
	if v := testutil.ToFloat64(ConflictsTotal.WithLabelValues("Deployment", "writer-0")); v != 1 {
		t.Fatalf("writer-0 = %v, want 1 (named, without its operation)", v)
	}
}
