/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/llmkube/operator/internal/routerproxy"
	"github.com/llmkube/operator/internal/routerproxy/endpoints"
)

// endpointsWatch runs the EndpointSlice watch of the backends with a Service, and restarts it
// when a new routing document changes those backends.
type endpointsWatch struct {
	log         *slog.Logger
	b           *routerproxy.Balancer
	kubeconfig  string
	syncTimeout time.Duration

	mu      sync.Mutex
	cs      kubernetes.Interface
	csErr   error
	running []endpoints.Target
	stop    context.CancelFunc
}

func newEndpointsWatch(log *slog.Logger, b *routerproxy.Balancer, kubeconfig string, syncTimeout time.Duration) *endpointsWatch {
	return &endpointsWatch{log: log, b: b, kubeconfig: kubeconfig, syncTimeout: syncTimeout}
}

// follow (re)starts the watch for the balancer's current targets and waits up to syncTimeout for
// it; it does nothing when they did not change. Without an API to talk to, those backends keep
// their Service URLs.
func (e *endpointsWatch) follow(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	targets := e.b.Targets()
	slices.SortFunc(targets, func(a, b endpoints.Target) int {
		if a.Backend < b.Backend {
			return -1
		}
		if a.Backend > b.Backend {
			return 1
		}
		return 0
	})
	if e.stop != nil && slices.Equal(targets, e.running) {
		return
	}
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
	e.running = targets
	if len(targets) == 0 {
		return
	}
	if e.cs == nil && e.csErr == nil {
		e.cs, e.csErr = client(e.kubeconfig)
	}
	if e.csErr != nil {
		e.log.Warn("no Kubernetes API to read EndpointSlices from", "error", e.csErr.Error())
		for _, t := range targets {
			e.b.Report(t.Backend, 0, endpoints.ReasonNoAPI)
		}
		return
	}
	wctx, stop := context.WithCancel(ctx)
	e.stop = stop
	w := &endpoints.Watcher{Client: e.cs, Targets: targets, Report: e.b.Report}
	w.Run(wctx, e.syncTimeout)
}

func client(kubeconfig string) (kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "llmkube-router-proxy"
	return kubernetes.NewForConfig(cfg)
}
