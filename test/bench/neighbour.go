/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/llmkube/operator/test/envtest/testenv"
)

// Neighbour is what another tenant of the API server sees while a convergence runs: the latency
// of its reads, one every 50 ms. It is an ordinary authenticated user (API Priority and
// Fairness's global-default level), not one of the exempt system:masters the benchmark's own
// clients are, so it gets what a neighbour of the operator gets in a cluster.
type Neighbour struct {
	Samples int          `json:"samples"`
	P50     jsonDuration `json:"p50"`
	P99     jsonDuration `json:"p99"`
	Max     jsonDuration `json:"max"`
}

const neighbourObject = "bench-neighbour"

// neighbourClient makes the neighbour's user, allowed to read ConfigMaps, and the ConfigMap it reads.
func (b *bench) neighbourClient(ctx context.Context, env *envtest.Environment) (client.Client, error) {
	user, err := env.AddUser(envtest.User{Name: "bench-neighbour", Groups: []string{"bench-neighbours"}}, nil)
	if err != nil {
		return nil, err
	}
	// Not the built-in view role: without kube-controller-manager nothing aggregates its rules.
	for _, obj := range []client.Object{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: neighbourObject},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: neighbourObject},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: neighbourObject},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "bench-neighbour"}},
		},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: neighbourObject, Namespace: metav1.NamespaceDefault}, Data: map[string]string{"a": "b"}},
	} {
		if err := b.user.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			return nil, err
		}
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-neighbour-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst, cfg.UserAgent = -1, 0, "bench-neighbour"
	return client.New(cfg, client.Options{Scheme: testenv.Scheme()})
}

// watchNeighbour starts reading as the neighbour; the returned function stops and summarises.
func (b *bench) watchNeighbour(ctx context.Context) func() Neighbour {
	if b.neighbour == nil {
		return func() Neighbour { return Neighbour{} }
	}
	nctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var lat []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-nctx.Done():
				return
			case <-t.C:
			}
			start := time.Now()
			cm := &corev1.ConfigMap{}
			if err := b.neighbour.Get(nctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: neighbourObject}, cm); err != nil {
				if nctx.Err() == nil {
					fmt.Fprintln(b.o.Log, "neighbour:", err)
				}
				continue
			}
			mu.Lock()
			lat = append(lat, time.Since(start))
			mu.Unlock()
		}
	}()
	return func() Neighbour {
		cancel()
		<-done
		if len(lat) == 0 {
			return Neighbour{}
		}
		return Neighbour{Samples: len(lat), P50: jsonDuration(quantile(lat, 0.5)), P99: jsonDuration(quantile(lat, 0.99)), Max: jsonDuration(quantile(lat, 1))}
	}
}
