/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// operatorUser is who the operator process is to the API server: a service account, as in a
// cluster, so that API Priority and Fairness puts it where it puts a real operator (the
// service-accounts flow schema, workload-low), not among the exempt system:masters.
const operatorUser = "system:serviceaccount:llmkube-system:llmkube-operator"

// kubeconfig writes a kubeconfig for operatorUser (bound to cluster-admin) into dir.
func (b *bench) kubeconfig(ctx context.Context, dir string) (string, error) {
	user, err := b.env.AddUser(envtest.User{Name: operatorUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:llmkube-system"}}, nil)
	if err != nil {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: operatorUser}},
	}
	if err := b.user.Create(ctx, binding); client.IgnoreAlreadyExists(err) != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// Settings are the operator's client and concurrency flags.
type Settings struct {
	QPS         float32 `json:"qps"`
	Burst       int     `json:"burst"`
	Concurrency int     `json:"maxConcurrentReconciles"`
	// Binary, when set, is another operator binary to run (a build before a change, for a
	// before-and-after in one run); Options.OperatorBinary otherwise.
	Binary string `json:"binary,omitempty"`
}

func (s Settings) String() string {
	out := fmt.Sprintf("--kube-api-qps=%g --kube-api-burst=%d --max-concurrent-reconciles=%d", s.QPS, s.Burst, s.Concurrency)
	if s.Binary != "" {
		out += " (" + filepath.Base(s.Binary) + ")"
	}
	return out
}

// process is one operator process.
type process struct {
	cmd        *exec.Cmd
	metricsURL string
	pprofURL   string
	started    time.Time
	exited     chan struct{}
}

// startProcess runs the operator binary over namespace ns and waits until its metrics endpoint
// answers.
func (b *bench) startProcess(ctx context.Context, ns string, s Settings, transform string) (*process, error) {
	mport, err := freePort()
	if err != nil {
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &process{
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport),
		pprofURL:   fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", pport),
		exited:     make(chan struct{}),
	}
	binary := b.o.OperatorBinary
	if s.Binary != "" {
		binary = s.Binary
	}
	p.cmd = exec.Command(binary,
		"--kubeconfig="+b.kubeconfigPath,
		"--watch-namespaces="+ns,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", mport),
		fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", pport),
		"--health-probe-bind-address=0",
		fmt.Sprintf("--kube-api-qps=%g", s.QPS),
		fmt.Sprintf("--kube-api-burst=%d", s.Burst),
		fmt.Sprintf("--max-concurrent-reconciles=%d", s.Concurrency),
		"--cache-transform="+transform,
		// No drift repair: a converged object's periodic no-op reconcile (every 10 minutes by
		// default) is measured as the steady state, and a convergence that outlasts the period
		// (N=10000 here) would otherwise count those reconciles as its own and never be quiet.
		"--drift-repair=0",
		"--zap-log-level=error",
	)
	p.cmd.Stderr = os.Stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	if err := poll(ctx, time.Minute, func() bool {
		_, err := scrape(p.metricsURL)
		return err == nil
	}); err != nil {
		p.stop()
		return nil, fmt.Errorf("operator process did not serve metrics: %w", err)
	}
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the process as Kubernetes does (SIGTERM), and kills it after 30 s.
func (p *process) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// reconciles is how many reconciles of controller the process has finished.
func (p *process) reconciles(controller string) float64 {
	m, err := scrape(p.metricsURL)
	if err != nil {
		return -1
	}
	return m["reconciles/"+controller]
}

// settle waits until the process has finished no reconcile of any kind for quiet.
func (p *process) settle(ctx context.Context, quiet time.Duration) error {
	return poll(ctx, 5*time.Minute, func() bool {
		a := p.reconciles("inferenceservice") + p.reconciles("modelrouter")
		time.Sleep(quiet)
		return p.reconciles("inferenceservice")+p.reconciles("modelrouter") == a
	})
}

// profile records a profile of the process for d into path, through net/http/pprof: kind
// "profile" is CPU, "allocs" the allocations made within d.
func (p *process) profile(ctx context.Context, kind string, d time.Duration, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/%s?seconds=%d", p.pprofURL, kind, int(d.Seconds())), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// memory measures the process once it is quiet.
func (p *process) memory(transform string) (*Child, error) {
	m, err := scrape(p.metricsURL)
	if err != nil {
		return nil, err
	}
	return &Child{CacheTransform: transform, RSS: procRSS(p.pid()), HeapInuse: uint64(m["heap"]), Reconciles: int(m["reconciles/inferenceservice"])}, nil
}

// scrapeClient asks for an uncompressed answer: gzip would cost the operator more CPU than the
// answer is worth on loopback.
var scrapeClient = &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}

// scrape reads the operator's reconcile counts (per controller) and heap in use from its metrics
// endpoint, filtered to those two metrics.
func scrape(url string) (map[string]float64, error) {
	resp, err := scrapeClient.Get(url + "?name[]=controller_runtime_reconcile_total&name[]=go_memstats_heap_inuse_bytes") //nolint:noctx // a local endpoint of a process the benchmark started
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
		switch {
		case name == "go_memstats_heap_inuse_bytes":
			out["heap"] = v
		case strings.HasPrefix(name, "controller_runtime_reconcile_total{"):
			labels := parseLabels(strings.TrimSuffix(strings.TrimPrefix(name, "controller_runtime_reconcile_total{"), "}"))
			out["reconciles/"+labels["controller"]] += v
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
