/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import "testing"

// TestFairCommand: a report's first line reruns it through make, which passes -fair and the
// operator binary itself.
func TestFairCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-fair", "-operator-binary", "bin/llmkube-operator", "-n", "5000", "-repeat", "2"},
			"make bench-fair BENCH_FAIR_ARGS='-n 5000 -repeat 2'"},
		{[]string{"--fair", "-operator-binary=bin/x", "-apiserver-profile", "-out", "docs/benchmarks/fair/n1000"},
			"make bench-fair BENCH_FAIR_ARGS='-apiserver-profile -out docs/benchmarks/fair/n1000'"},
	} {
		if got := fairCommand(tc.args); got != tc.want {
			t.Errorf("fairCommand(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
