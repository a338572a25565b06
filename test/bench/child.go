/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Child is the operator binary run as its own process, measured from outside: its RSS from
// /proc/<pid>/status and its heap from its own metrics endpoint. Unlike the in-process numbers,
// nothing of the benchmark (its clients, its watches, the floor's objects) is in them.
type Child struct {
	CacheTransform string `json:"cacheTransform"`
	RSS            uint64 `json:"rss"`
	HeapInuse      uint64 `json:"heapInuse"`
	Reconciles     int    `json:"reconciles"`
}

// runChild starts binary on the control plane watching ns, waits until it has reconciled every
// one of the n InferenceServices and gone quiet, and measures it.
func runChild(ctx context.Context, env *envtest.Environment, binary, ns string, n int, o Options, transform string) (*Child, error) {
	user, err := env.AddUser(envtest.User{Name: "bench-operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-operator-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, binary,
		"--kubeconfig="+path,
		"--watch-namespaces="+ns,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port),
		"--health-probe-bind-address=0",
		fmt.Sprintf("--kube-api-qps=%g", o.QPS),
		fmt.Sprintf("--kube-api-burst=%d", o.Burst),
		fmt.Sprintf("--max-concurrent-reconciles=%d", o.MaxConcurrentReconciles),
		"--cache-transform="+transform,
		"--zap-log-level=error",
	)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	var last float64 = -1
	stableSince := time.Now()
	err = poll(ctx, 3*time.Minute, func() bool {
		time.Sleep(250 * time.Millisecond)
		m, err := scrape(url)
		if err != nil {
			return false
		}
		rec := m["reconciles"]
		if rec != last {
			last, stableSince = rec, time.Now()
			return false
		}
		return rec >= float64(n) && time.Since(stableSince) > 2*time.Second
	})
	if err != nil {
		return nil, fmt.Errorf("operator process (%s): %w", transform, err)
	}
	m, err := scrape(url)
	if err != nil {
		return nil, err
	}
	return &Child{CacheTransform: transform, RSS: procRSS(cmd.Process.Pid), HeapInuse: uint64(m["heap"]), Reconciles: int(m["reconciles"])}, nil
}

// scrape reads the operator's reconcile count and heap in use from its metrics endpoint.
func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // a local endpoint of a process the benchmark started
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch {
		case f[0] == "go_memstats_heap_inuse_bytes":
			out["heap"] = v
		case strings.HasPrefix(f[0], "controller_runtime_reconcile_total{") && strings.Contains(f[0], `controller="inferenceservice"`):
			out["reconciles"] += v
		}
	}
	return out, s.Err()
}

func procRSS(pid int) uint64 {
	return rssFrom(fmt.Sprintf("/proc/%d/status", pid))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
