/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package redisserver runs a real redis-server (the Debian package .ci/run installs) for tests:
// on loopback, a free port, a temporary directory, with the persistence docs/limits.md
// recommends (appendonly yes, appendfsync everysec), stopped and removed at the test's end.
package redisserver

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// T is what the server needs of a test (testing.TB and GinkgoT() both have it).
type T interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Server is one redis-server process; Stop and Start keep its port and data directory, as a
// restarted Redis would.
type Server struct {
	Addr     string
	Password string
	dir      string
	cmd      *exec.Cmd
	t        T
}

// Start runs redis-server and waits until it accepts connections. password may be empty.
func Start(t T, password string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed (apt-get install redis-server; .ci/run does): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	s := &Server{Addr: addr, Password: password, dir: t.TempDir(), t: t}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start starts the (stopped) server again on its port with its data.
func (s *Server) Start() {
	s.t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--dir", s.dir, "--save", "",
		"--appendonly", "yes", "--appendfsync", "everysec", "--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log")}
	if s.Password != "" {
		args = append(args, "--requirepass", s.Password)
	}
	s.cmd = exec.Command("redis-server", args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", s.Addr, 100*time.Millisecond); err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	s.t.Fatalf("redis-server did not listen on %s within 10s: %s", s.Addr, log)
}

// Stop shuts the server down as SIGTERM does (it flushes its append-only file) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a paused server handles no SIGTERM
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// Forget stops the server and removes its data: the next Start is a Redis restarted without its
// append-only file.
func (s *Server) Forget() {
	s.Stop()
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if e.Name() != "redis.log" {
			_ = os.RemoveAll(filepath.Join(s.dir, e.Name()))
		}
	}
}

// Pause stops the server's process (SIGSTOP): it keeps its connections and answers nothing
// until Resume (SIGCONT), when it runs what was sent meanwhile.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a paused server run again.
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// Pid is the running server's process id (0 when stopped), for a benchmark that reads its CPU.
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Port is the server's port.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(p)
	return n
}

func (s *Server) String() string { return fmt.Sprintf("redis-server %s (%s)", s.Addr, s.dir) }
