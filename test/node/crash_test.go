/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/llmkube/operator/internal/node"
	"github.com/llmkube/operator/test/helmtool"
)

// A run that crashed leaves a process in the node's cgroup, a mount under its state directory and
// its network namespace; the next run of the same name removes them before it sets up its own, and
// its Stop leaves nothing.
//
// Proves N4.
func TestTheNextRunRemovesWhatACrashedRunLeft(t *testing.T) {
	if os.Getenv("LLMKUBE_NODE_E2E") == "" {
		t.Skip("runs with LLMKUBE_NODE_E2E=1 (root): `make test-node`")
	}
	const name = "llmkube-crash"
	state := "/var/lib/llmkube/" + name
	cfg := node.Config{
		Name: name, StateDir: state, Assets: os.Getenv("KUBEBUILDER_ASSETS"), LogDir: t.TempDir(),
		Link: netip.MustParsePrefix("198.19.252.0/30"), PodCIDR: "198.18.0.0/24", ServiceCIDR: "198.18.128.0/24",
	}
	crashed := prepareAndCrash(t, cfg)

	left := node.Leftovers(name, state)
	t.Logf("left by the crashed run: %v", left)
	if len(left) < 4 {
		t.Fatalf("the simulated crash left too little to prove anything: %v", left)
	}
	n, err := node.Prepare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-crashed:
	case <-time.After(5 * time.Second):
		t.Errorf("the crashed run's process still runs after the next run's Prepare")
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := node.Leftovers(name, state); len(left) > 0 {
		t.Fatalf("after the next run stopped: %v", left)
	}
}

// prepareAndCrash sets a node up in a child process, as a run does before its kubelet starts, adds
// a process to its cgroup and a mount under its state directory, and kills the child with SIGKILL
// (no Stop runs). It returns a channel closed when the process left in the cgroup has ended.
func prepareAndCrash(t *testing.T, cfg node.Config) <-chan struct{} {
	t.Helper()
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = sleeper.Wait(); close(ended) }()
	t.Cleanup(func() { _ = sleeper.Process.Kill(); <-ended })
	child := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	child.Env = append(os.Environ(), "LLMKUBE_CRASH_CHILD=1", "LLMKUBE_CRASH_PID="+strconv.Itoa(sleeper.Process.Pid),
		"LLMKUBE_CRASH_NAME="+cfg.Name, "LLMKUBE_CRASH_STATE="+cfg.StateDir, "LLMKUBE_CRASH_LOGS="+cfg.LogDir)
	child.Dir = filepath.Join(helmtool.RepoRoot(), "test", "node")
	out, err := child.CombinedOutput()
	if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not crash as planned: %v\n%s", err, out)
	}
	return ended
}

// TestCrashChild is the crashing run of TestTheNextRunRemovesWhatACrashedRunLeft; alone it does
// nothing.
func TestCrashChild(t *testing.T) {
	if os.Getenv("LLMKUBE_CRASH_CHILD") != "1" {
		t.Skip("the crashing half of TestTheNextRunRemovesWhatACrashedRunLeft")
	}
	cfg := node.Config{
		Name: os.Getenv("LLMKUBE_CRASH_NAME"), StateDir: os.Getenv("LLMKUBE_CRASH_STATE"),
		Assets: os.Getenv("KUBEBUILDER_ASSETS"), LogDir: os.Getenv("LLMKUBE_CRASH_LOGS"),
		Link: netip.MustParsePrefix("198.19.252.0/30"), PodCIDR: "198.18.0.0/24", ServiceCIDR: "198.18.128.0/24",
	}
	if _, err := node.Prepare(cfg); err != nil {
		t.Fatal(err)
	}
	// What a kubelet and containerd would have made: a process in the node's cgroup, a mount.
	pids := filepath.Join("/sys/fs/cgroup/pids", cfg.Name, "system")
	if err := os.MkdirAll(pids, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pids, "cgroup.procs"), []byte(os.Getenv("LLMKUBE_CRASH_PID")), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(cfg.StateDir, "containerd", "rootfs")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}
