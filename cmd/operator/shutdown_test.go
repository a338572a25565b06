/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmkube/operator/test/procstat"
)

// [I52] The embedded control plane stops as on Ctrl-C whichever way the run ends: SIGINT with its
// output piped into a reader that is gone (`make run 2>&1 | tee run.log`: Ctrl-C stops tee too),
// a closed terminal (SIGHUP) and SIGTERM. The operator exits 0 and no process it started is left.
func TestEveryWayToStopStopsTheEmbeddedControlPlane(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the suite with `make test`, which builds the control plane first (`make envtest-bin`)")
	}
	bin := filepath.Join(t.TempDir(), "llmkube-operator")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		sig        syscall.Signal
		closedPipe bool
	}{
		{"Ctrl-C piped into a reader that stopped", syscall.SIGINT, true},
		{"the terminal closed (SIGHUP)", syscall.SIGHUP, false},
		{"SIGTERM", syscall.SIGTERM, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "--dev-control-plane=always", "--dev-node=kwok", "--dev-dir="+t.TempDir(),
				"--health-probe-bind-address=0", "--zap-encoder=console")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "KUBECONFIG=")
			cmd.Stdout, cmd.Stderr = w, w // as 2>&1 | tee does
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			_ = w.Close()
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			up := make(chan error, 1)
			var tail []string
			go func() {
				sc := bufio.NewScanner(r)
				for sc.Scan() {
					tail = append(tail, sc.Text())
					if strings.Contains(sc.Text(), "starting manager") {
						up <- nil
						if tc.closedPipe {
							_ = r.Close() // the reader is gone: every later write gets EPIPE
							return
						}
					}
				}
				up <- errors.New("output ended before the operator started")
			}()
			select {
			case err := <-up:
				if err != nil {
					t.Fatalf("%v:\n%s", err, strings.Join(tail, "\n"))
				}
			case <-time.After(5 * time.Minute):
				t.Fatal("the embedded control plane did not come up within 5 minutes")
			}
			children := procstat.Descendants(cmd.Process.Pid)
			if len(children) < 2 {
				t.Fatalf("the run started %d processes (%v): nothing to prove", len(children), children)
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("the operator ended with %v (%s), want a clean exit 0", err, cmd.ProcessState)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("the operator did not exit within 2 minutes")
			}
			// Its children were stopped, not orphaned (etcd, kube-apiserver, KWOK, ...).
			deadline := time.Now().Add(10 * time.Second)
			for pid, line := range children {
				for procstat.Alive(pid, line) && time.Now().Before(deadline) {
					time.Sleep(100 * time.Millisecond)
				}
				if procstat.Alive(pid, line) {
					t.Errorf("left running after the operator exited: pid %d %s", pid, line)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}
