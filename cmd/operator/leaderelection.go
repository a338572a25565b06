/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// inClusterNamespaceFile is where a pod's service account token mount puts the pod's namespace.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaderElectionNamespace is the namespace of the leader-election Lease: the flag's value, else
// the namespace the operator runs in, from POD_NAMESPACE (which the chart sets through the
// downward API) or the service account's namespace file.
//
// Note: controller-runtime finds the namespace file on its own, but outside a cluster it stops with
// "please specify LeaderElectionNamespace", which names no flag a user can set; this error does.
func leaderElectionNamespace(flagValue, namespaceFile string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if ns := strings.TrimSpace(os.Getenv("POD_NAMESPACE")); ns != "" {
		return ns, nil
	}
	data, err := os.ReadFile(namespaceFile)
	if ns := strings.TrimSpace(string(data)); err == nil && ns != "" {
		return ns, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("--leader-elect: reading the namespace the operator runs in: %w; set --leader-election-namespace", err)
	}
	return "", errors.New("--leader-elect outside a cluster needs --leader-election-namespace: the namespace of the Lease that the replicas elect a leader with (POD_NAMESPACE is not set and " + namespaceFile + " does not exist)")
}
