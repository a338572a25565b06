/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package docs

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `make fuzz`, which CI runs, gives every fuzz target of the repository a budget of executions
// (`-fuzztime=<N>x`), never a duration. With a duration, Go 1.26's fuzz coordinator can report its
// own deadline as the target's failure ("context deadline exceeded", no crasher written) on a
// loaded machine (golang/go#75804, fixed in Go 1.27); that failed a CI run. And a Fuzz function
// left out of the list would never be fuzzed, only its seed corpus run.
func TestMakeFuzzRunsEveryTargetForACountOfExecutions(t *testing.T) {
	out, err := exec.Command("make", "-C", root, "-qp").Output()
	// -q exits 1 when a target is out of date; the database is printed either way.
	if len(out) == 0 {
		t.Fatalf("make -qp printed nothing: %v", err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		for _, name := range []string{"FUZZ_TARGETS", "FUZZTIME"} {
			for _, op := range []string{" := ", " = "} {
				if v, ok := strings.CutPrefix(line, name+op); ok {
					vars[name] = strings.TrimSpace(v)
				}
			}
		}
	}
	if vars["FUZZTIME"] != "" {
		t.Errorf("FUZZTIME defaults to %q; leave it empty so each target's count budget applies", vars["FUZZTIME"])
	}
	listed := map[string]bool{}
	count := regexp.MustCompile(`^[1-9][0-9]*x$`)
	for _, target := range strings.Fields(vars["FUZZ_TARGETS"]) {
		parts := strings.Split(target, ":")
		if len(parts) >= 2 {
			listed[filepath.Clean(parts[0])+":"+parts[1]] = true
		}
		if len(parts) != 3 || !count.MatchString(parts[2]) {
			t.Errorf("FUZZ_TARGETS entry %q: want package:FuzzName:<executions>x, a count, not a duration", target)
		}
	}

	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
	eachTestFile(t, root, func(path, text string) {
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range fuzzFunc.FindAllStringSubmatch(text, -1) {
			if !listed[filepath.Clean(rel)+":"+m[1]] {
				t.Errorf("%s in ./%s is not in the Makefile's FUZZ_TARGETS, so `make fuzz` never fuzzes it", m[1], rel)
			}
		}
	})
}
