/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmkube/operator/internal/devcluster"
	"github.com/llmkube/operator/internal/node"
	"github.com/llmkube/operator/test/docblocks"
	"github.com/llmkube/operator/test/helmtool"
	"github.com/llmkube/operator/test/procstat"
)

// Deadlines of the make run test. Up: `make run` builds the operator, and the node and the
// images when they are missing, before the cluster starts (make test-node builds both first).
const (
	makeRunUpTimeout   = 10 * time.Minute
	makeRunStopTimeout = 3 * time.Minute
)

// TestMakeRunServesTheQuickStartOnARealNode types `make run` as a user does, on a machine without
// a cluster (no KUBECONFIG, no ~/.kube/config), runs the README's quick start as written against
// its cluster, request through the router included, then presses Ctrl-C (SIGINT to make's process
// group, as a terminal does) and checks that nothing is left.
//
// Proves N9, N10, N11, N12 (and N19, in helmOnMakeRun).
func TestMakeRunServesTheQuickStartOnARealNode(t *testing.T) {
	if os.Getenv("LLMKUBE_NODE_E2E") == "" {
		t.Skip("runs with LLMKUBE_NODE_E2E=1 (root): `make test-node`")
	}
	if err := devcluster.CanRunContainers(); err != nil {
		t.Fatalf("this machine cannot run the real node: %v", err)
	}
	root := helmtool.RepoRoot()
	// N12: make run builds what its node needs when it is missing. The images go (rebuilt in
	// about 20 s); the node's binaries stay (13 minutes to rebuild: make node-bin's own check).
	images := filepath.Join(root, "build", "images")
	if err := os.RemoveAll(images); err != nil {
		t.Fatal(err)
	}
	// N11: a make run killed outright (SIGKILL to its process group: no Stop runs) leaves its node
	// and its control plane behind; the next make run removes them before it starts its own.
	crashed := startMakeRun(t, root)
	crashed.waitUp(t)
	if _, err := os.Stat(filepath.Join(images, "router-proxy", "index.json")); err != nil {
		t.Fatalf("make run did not build the images it lacked: %v", err)
	}
	crashedProcs := crashed.descendants()
	crashed.kill(t)
	left := node.Leftovers(devcluster.LocalNodeName, devcluster.LocalNodeStateDir)
	t.Logf("left by the killed make run: %v", left)
	if len(left) == 0 {
		t.Fatal("the killed make run left nothing: the crash proves nothing")
	}

	run := startMakeRun(t, root)
	up := run.waitUp(t)
	for pid, cmdline := range crashedProcs {
		if procstat.Alive(pid, cmdline) {
			t.Errorf("the killed make run's process still runs after the next one started: pid %d %s", pid, cmdline)
		}
	}

	// N10: the README's quick start, as written, in a reader's checkout.
	dir := t.TempDir()
	for _, f := range []string{"config/samples/local/inferenceservice.yaml", "config/samples/inference_v1alpha1_modelrouter.yaml", ".dev/kubeconfig"} {
		copyInto(t, filepath.Join(root, f), filepath.Join(dir, f))
	}
	readme := filepath.Join(root, "README.md")
	quickstart, err := docblocks.Runnable(readme, "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	request, err := docblocks.Runnable(readme, "quickstart-request")
	if err != nil || len(request) == 0 || len(quickstart) == 0 {
		t.Fatalf("README.md's quick start: %v (%d blocks, %d of the request)", err, len(quickstart), len(request))
	}
	blocks := append(quickstart, request...)
	outs, err := docblocks.Run(dir, blocks)
	if err != nil {
		t.Fatal(err)
	}
	answered := false
	for i, b := range blocks {
		if b.Output == nil {
			continue
		}
		if b.Run == "quickstart-request" {
			sameAnswer(t, b, outs[i])
			answered = true
			continue
		}
		if got, want := docblocks.Comparable(outs[i]), docblocks.Comparable(*b.Output); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s prints something else than the README shows:\n%s", b, outs[i])
		}
	}
	if !answered {
		t.Fatal("the README's quick start shows no answer through the router")
	}
	kubectl := func(args ...string) string {
		cmd := exec.Command("kubectl", args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, ".dev", "kubeconfig"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// The pods are real containers, and the router's is the image the node holds.
	pods := kubectl("get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[0].image} {.status.containerStatuses[0].containerID} {.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\n"}{end}`)
	t.Logf("pods:\n%s", pods)
	firstReady := time.Time{}
	for _, line := range strings.Split(strings.TrimSpace(pods), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || !strings.HasPrefix(f[1], devcluster.ImageBaseName+"/") || !strings.HasPrefix(f[2], "containerd://") {
			t.Fatalf("a pod that is not a container of the node's own images: %q", line)
		}
		if ready, err := time.Parse(time.RFC3339, f[3]); err == nil && (firstReady.IsZero() || ready.Before(firstReady)) {
			firstReady = ready
		}
	}
	// Measured for docs/real-node.md: from `make run` to the first pod still running that became
	// Ready (the router's; the first tinyllama pod was replaced by the quick start's rollout).
	t.Logf("make run to the control plane up: %s; to the first Ready pod: %s", up.Round(time.Second), firstReady.Sub(run.started.Truncate(time.Second)))
	for name, b := range cgroupRSS(devcluster.LocalNodeName) {
		t.Logf("node memory: %s %d MiB", name, b>>20)
	}

	// N19: the chart installed on this cluster by the README's one command takes it over.
	helmOnMakeRun(t, root, run, kubectl)

	// N11: Ctrl-C stops everything make run started, and the node leaves nothing behind.
	started := run.descendants()
	run.interrupt(t, makeRunStopTimeout)
	for pid, cmdline := range started {
		if procstat.Alive(pid, cmdline) {
			t.Errorf("still running after Ctrl-C: pid %d %s", pid, cmdline)
		}
	}
	if left := node.Leftovers(devcluster.LocalNodeName, devcluster.LocalNodeStateDir); len(left) > 0 {
		t.Errorf("make run's node left, after Ctrl-C: %v", left)
	}
}

// waitUp waits for the line that says which nodes make run's cluster has (N9), checks that it
// names the real node, and returns how long make run took to print it.
func (r *makeRun) waitUp(t *testing.T) time.Duration {
	t.Helper()
	nodes := r.waitFor(t, "Node", makeRunUpTimeout)
	up := time.Since(r.started)
	t.Logf("make run: %q after %s", strings.TrimSpace(nodes), up.Round(time.Millisecond))
	if !strings.Contains(nodes, "Node: "+devcluster.LocalNodeName+", a real node on this machine") {
		t.Fatalf("make run did not start the real node on a machine that can run containers: %q", nodes)
	}
	return up
}

// kill ends make run's process group with SIGKILL, as a crash or a killed terminal would.
func (r *makeRun) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.exited:
	case <-time.After(makeRunStopTimeout):
		t.Fatalf("make run did not end within %s of SIGKILL", makeRunStopTimeout)
	}
}

// makeRun is a `make run` in progress, its output read line by line.
type makeRun struct {
	cmd     *exec.Cmd
	started time.Time
	mu      sync.Mutex
	out     strings.Builder
	lines   chan string
	exited  chan struct{}
}

// startMakeRun starts `make run` in root in a process group of its own, as a shell starts a
// foreground job, with the environment of a user who has no cluster: no KUBECONFIG, and a HOME
// without ~/.kube/config (Go's and the control plane's caches stay where they are).
func startMakeRun(t *testing.T, root string) *makeRun {
	t.Helper()
	env := []string{"HOME=" + t.TempDir(), "ENVTEST_CACHE=" + filepath.Dir(os.Getenv("KUBEBUILDER_ASSETS"))}
	goenv, err := exec.Command("go", "env", "GOENV", "GOPATH", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range strings.Fields(string(goenv)) {
		env = append(env, []string{"GOENV", "GOPATH", "GOCACHE", "GOMODCACHE"}[i]+"="+v)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "HOME", "ENVTEST_CACHE", "KUBEBUILDER_ASSETS", "MAKEFLAGS", "MAKELEVEL":
		default:
			env = append(env, kv)
		}
	}
	cmd := exec.Command("make", "--no-print-directory", "run")
	cmd.Dir, cmd.Env = root, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	r := &makeRun{cmd: cmd, lines: make(chan string, 1024), exited: make(chan struct{})}
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			r.mu.Lock()
			r.out.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			select {
			case r.lines <- sc.Text():
			default:
			}
		}
		_ = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		// A run the test did not stop itself is stopped as a user would (Ctrl-C), so that it
		// cleans up; SIGKILL only past the deadline.
		select {
		case <-r.exited:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			select {
			case <-r.exited:
			case <-time.After(makeRunStopTimeout):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-r.exited
			}
		}
		if t.Failed() {
			t.Logf("make run printed:\n%s", r.output())
			data, _ := os.ReadFile(filepath.Join(root, ".dev", "logs", "kubelet.log"))
			lines := strings.Split(string(data), "\n")
			t.Logf("kubelet.log (last lines):\n%s", strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	return r
}

func (r *makeRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// waitFor returns the first line that starts, after blanks, with prefix.
func (r *makeRun) waitFor(t *testing.T, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line := <-r.lines:
			if strings.HasPrefix(strings.TrimSpace(line), prefix) {
				return line
			}
		case <-r.exited:
			t.Fatalf("make run exited before printing %q", prefix)
		case <-deadline:
			t.Fatalf("make run printed no %q line within %s", prefix, timeout)
		}
	}
}

// interrupt sends SIGINT to make's process group, as Ctrl-C in a terminal does, and waits until
// make has exited.
func (r *makeRun) interrupt(t *testing.T, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	if err := syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.exited:
		t.Logf("make run stopped %s after Ctrl-C", time.Since(start).Round(time.Millisecond))
	case <-time.After(timeout):
		t.Fatalf("make run did not stop within %s of Ctrl-C", timeout)
	}
}

// descendants lists every process below make (its shell, the operator, the control plane, the
// node's processes and containers), by pid, with its command line.
func (r *makeRun) descendants() map[int]string { return procstat.Descendants(r.cmd.Process.Pid) }

// sameAnswer compares the answer a request block printed with the one the README shows: the same
// model, text and finish reason; the id and the time differ from one request to the next.
func sameAnswer(t *testing.T, b docblocks.Block, got string) {
	t.Helper()
	type answer struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	t.Logf("the answer through the router: %s", got)
	var g, w answer
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: the request printed no JSON answer: %v\n%s", b, err, got)
	}
	if err := json.Unmarshal([]byte(*b.Output), &w); err != nil {
		t.Fatalf("%s: the README's answer is no JSON: %v", b, err)
	}
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if string(gj) != string(wj) || !strings.Contains(got, "simulator") {
		t.Errorf("%s: the answer through the router is not the README's:\n got %s\nwant %s", b, gj, wj)
	}
}

// cgroupRSS is the resident memory of the node's own processes (containerd, its shims, the
// kubelet, kube-proxy: those in /<name>/system), by command name.
func cgroupRSS(name string) map[string]int64 {
	out := map[string]int64{}
	data, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/pids", name, "system", "cgroup.procs"))
	for _, s := range strings.Fields(string(data)) {
		pid, _ := strconv.Atoi(s)
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				out[strings.TrimSpace(string(comm))] += kb << 10
			}
		}
	}
	return out
}

func copyInto(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
