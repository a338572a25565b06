/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command pause is the process of the real node's pod sandboxes (internal/node): it holds a pod's
// namespaces and does nothing else until it is told to stop.
//
// Note: the node cannot pull registry.k8s.io/pause (no registry is reachable), so the project builds
// its own, packed as an image like the operator's (`make images`) and loaded into containerd. Like
// the upstream pause, it reaps the zombies of a pod that shares its PID namespace.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
