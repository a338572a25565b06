/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// shutdownContext is cancelled by the first SIGINT (Ctrl-C), SIGTERM (the kubelet) or SIGHUP (the
// terminal closed); a second one exits at once, as controller-runtime's handler does. Every one of
// them then stops an embedded control plane and its node the same way.
//
// Note: a Go program that does not ask for SIGPIPE dies of it on its first write to a closed
// stdout or stderr, so `make run 2>&1 | tee run.log` with Ctrl-C (which stops tee too) killed the
// operator on its first shutdown log line and left the whole node running. Asking for it turns
// that write into an EPIPE error the logger drops. Notify rather than Ignore: an ignored signal
// stays ignored in every child (etcd, kubelet, containerd and the containers), a handled one does
// not.
func shutdownContext() context.Context {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, cancel := context.WithCancel(context.Background())
	c := make(chan os.Signal, 2)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-c
		cancel()
		<-c
		os.Exit(1)
	}()
	return ctx
}
