/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// devContextName is the context, cluster and user name of the kubeconfig the embedded cluster of
// `make run` writes (envtest names them so).
const devContextName = "envtest"

// checkReachable says in words what a kubeconfig pointing at a stopped local cluster means,
// before the manager's first request would report a bare "connection refused".
//
// Note: the embedded cluster of `make run` keeps its state in a temporary directory removed at
// exit, but its kubeconfig (.dev/kubeconfig) stays, and a shell that exported KUBECONFIG for it
// still points there after make run stopped. A second `make run` in that shell then finds "a
// cluster" and fails on its first request. Only loopback servers are checked: a remote API server
// that refuses may be restarting, and the ordinary error says enough there.
func checkReachable(cfg *rest.Config, rules *clientcmd.ClientConfigLoadingRules, devKubeconfig string) error {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return nil
	}
	host := u.Hostname()
	if !isLoopback(host) {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	addr := net.JoinHostPort(host, port)
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		_ = conn.Close()
		return nil
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	files := kubeconfigFiles(rules)
	if isDevKubeconfig(rules, files, devKubeconfig) {
		return fmt.Errorf("KUBECONFIG=%s is the kubeconfig of an earlier `make run`, and that embedded cluster is no longer running "+
			"(nothing listens at %s; its state lived in memory and went with it). "+
			"Run `unset KUBECONFIG` and then `make run` to start a new one, or point KUBECONFIG at a running cluster",
			strings.Join(files, string(filepath.ListSeparator)), addr)
	}
	return fmt.Errorf("the cluster of your kubeconfig (%s) is not running: %s refuses connections. "+
		"Start that local cluster again, or run `unset KUBECONFIG` (with no ~/.kube/config) and `make run` for an embedded one",
		strings.Join(files, string(filepath.ListSeparator)), addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// kubeconfigFiles are the files the loading rules read, as a person would name them.
func kubeconfigFiles(rules *clientcmd.ClientConfigLoadingRules) []string {
	if rules.ExplicitPath != "" {
		return []string{rules.ExplicitPath}
	}
	return rules.GetLoadingPrecedence()
}

// isDevKubeconfig says whether the configuration is the one `make run` writes: the file itself,
// or a copy of it (its current context is envtest's).
func isDevKubeconfig(rules *clientcmd.ClientConfigLoadingRules, files []string, devKubeconfig string) bool {
	for _, f := range files {
		if abs, err := filepath.Abs(f); err == nil && abs == devKubeconfig {
			return true
		}
	}
	raw, err := rules.Load()
	return err == nil && raw.CurrentContext == devContextName
}

// loadingRules are the kubeconfig rules controller-runtime's GetConfig follows: its --kubeconfig
// flag, else $KUBECONFIG, else ~/.kube/config.
func loadingRules() *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f := flag.Lookup("kubeconfig"); f != nil {
		rules.ExplicitPath = f.Value.String()
	}
	return rules
}
