/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/llmkube/operator/internal/routerproxy"
	"github.com/llmkube/operator/internal/routerproxy/endpoints"
	"github.com/llmkube/operator/internal/routingdoc"
)

// watchEndpoints starts the EndpointSlice watch of the backends with a Service and waits up to
// syncTimeout for it. Without an API to talk to, those backends keep their Service URLs.
func watchEndpoints(ctx context.Context, log *slog.Logger, b *routerproxy.Balancer, doc *routingdoc.Document, kubeconfig string, syncTimeout time.Duration) {
	targets := b.Targets(doc)
	if len(targets) == 0 {
		return
	}
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	var cs kubernetes.Interface
	if err == nil {
		cfg.UserAgent = "llmkube-router-proxy"
		cs, err = kubernetes.NewForConfig(cfg)
	}
	if err != nil {
		log.Warn("no Kubernetes API to read EndpointSlices from", "error", err.Error())
		for _, t := range targets {
			b.Report(t.Backend, 0, endpoints.ReasonNoAPI)
		}
		return
	}
	w := &endpoints.Watcher{Client: cs, Targets: targets, Report: b.Report}
	w.Run(ctx, syncTimeout)
}
