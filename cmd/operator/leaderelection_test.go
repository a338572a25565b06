/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLeaderElectionNamespace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "namespace")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name, flag, podNamespace, file, want string
	}{
		{"the flag wins", "from-flag", "from-env", file, "from-flag"},
		{"POD_NAMESPACE, as the chart sets it", "", "from-env", file, "from-env"},
		{"the service account's namespace file in a pod", "", "", file, "from-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tc.podNamespace)
			got, err := leaderElectionNamespace(tc.flag, tc.file)
			if err != nil || got != tc.want {
				t.Fatalf("leaderElectionNamespace = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("outside a cluster without the flag: an error that names it", func(t *testing.T) {
		t.Setenv("POD_NAMESPACE", "")
		_, err := leaderElectionNamespace("", missing)
		if err == nil || !strings.Contains(err.Error(), "--leader-election-namespace") {
			t.Fatalf("err = %v; want one naming --leader-election-namespace", err)
		}
	})
}
