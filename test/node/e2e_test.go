/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package node_test is the end-to-end suite on a real node (internal/node): the images `make
// images` builds run as containers under a real kubelet, the chart is installed with helm as a
// user installs it, and the official OpenAI client gets answers through the router's Service.
// `make test-node` runs it (it needs root, and builds the node and the images first).
package node_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/llmkube/operator/internal/devcluster"
	"github.com/llmkube/operator/internal/node"
	"github.com/llmkube/operator/test/helmtool"
)

// The suite's node has a name, a state directory and a link of its own, so it never meets the node
// of a `make run` on the same machine; a run that crashed is cleaned up by the next one.
const (
	nodeName = "llmkube-e2e"
	stateDir = "/var/lib/llmkube/llmkube-e2e"
	release  = "llmkube"
	chartNS  = "llmkube-system"
)

var link = netip.MustParsePrefix("198.19.253.0/30")

type suite struct {
	t          *testing.T
	kubeconfig string
	cluster    *devcluster.Cluster
}

// TestRealNode runs the suite on binaries built from source and cached by version (it cannot start
// without them) and images loaded from `make images`.
//
// Proves N1, N2, N3, N4, N5, N6, N7, N8, N13, N14, N15, N16, N17, N18.
func TestRealNode(t *testing.T) {
	if os.Getenv("LLMKUBE_NODE_E2E") == "" {
		t.Skip("the real-node suite runs with LLMKUBE_NODE_E2E=1: `make test-node` (root, builds the node and the images first)")
	}
	if err := devcluster.CanRunContainers(); err != nil {
		t.Fatalf("this machine cannot run the real node: %v", err)
	}
	root := helmtool.RepoRoot()
	images := filepath.Join(root, "build", "images")
	img := func(name string) node.Image {
		return node.Image{Layout: filepath.Join(images, name), BaseName: "localhost/llmkube/" + name}
	}
	s := &suite{t: t, kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}
	start := time.Now()
	c, err := devcluster.StartWithNode("", s.kubeconfig, devcluster.NodeOptions{
		Name: nodeName, StateDir: stateDir, Link: link,
		Sandbox: img("pause"),
		Images:  []node.Image{img("operator"), img("router-proxy"), img("model-simulator")},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.cluster = c
	t.Cleanup(func() {
		if t.Failed() {
			s.dumpState()
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		t.Logf("the API server and etcd stopped in %s", c.EnvStopTook.Round(time.Millisecond))
		// N4: nothing the node set up outlives it.
		if left := node.Leftovers(nodeName, stateDir); len(left) > 0 {
			t.Errorf("the stopped node left: %v", left)
		}
	})
	t.Logf("node Ready %s after the start", time.Since(start).Round(time.Millisecond))

	t.Run("helm install runs the operator as a pod of the chart", s.helmInstall)
	t.Run("the samples run on simulator pods", s.samplesRun)
	t.Run("the pod and Service ranges exist only in the node's network namespace", s.rangesStayInside)
	t.Run("the OpenAI client gets an answer and a stream through the router's Service", s.openAIThroughRouter)
	t.Run("N18: the OpenAI Node SDK gets an answer and a stream through the router's Service", s.nodeSDKThroughRouter)
	t.Run("N8: the router's GOMEMLIMIT is 90% of its real memory limit", s.goMemLimit("default", "router-router-proxy", "9090"))
	t.Run("N13: the operator's GOMEMLIMIT is 90% of its real memory limit", s.goMemLimit(chartNS, release, "8080"))
	t.Run("N7 and N14: a removed pod label leaves through a real rollout, after the stream in flight", s.labelRemovalWaitsForIdle)
	t.Run("N15: a ModelRouter edit reaches the running router without a restart or a cut stream", s.routerEdit)
	t.Run("N16: helm uninstall leaves the CRDs, the custom resources and their running pods", s.helmUninstall)
	t.Run("N17: helm upgrade from the previous chart upgrades the CRDs and keeps the pods", s.helmUpgrade)
	for name, b := range c.Node().Memory() {
		t.Logf("node memory: %s %d MiB", name, b>>20)
	}
}

func (s *suite) kubectl(args ...string) string {
	s.t.Helper()
	out, err := s.kubectlErr(args...)
	if err != nil {
		s.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (s *suite) kubectlErr(args ...string) (string, error) {
	cmd := exec.Command("kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *suite) helmInstall(t *testing.T) {
	if _, err := s.helm(append([]string{"install", release, helmtool.Chart(), "-n", chartNS, "--create-namespace",
		"--wait", "--timeout", "3m"}, localImages...)...); err != nil {
		t.Fatal(err)
	}
	s.kubectl("-n", chartNS, "wait", "--for=condition=Available", "deploy", "--all", "--timeout=120s")
	pods := s.kubectl("-n", chartNS, "get", "pods", "-o", `jsonpath={range .items[*]}{.spec.serviceAccountName} {.status.containerStatuses[0].ready} {.status.containerStatuses[0].restartCount}{"\n"}{end}`)
	t.Logf("operator pods (serviceAccount ready restarts):\n%s", pods)
	if !strings.Contains(pods, " true 0") {
		t.Fatalf("the operator pod is not ready without restarts:\n%s", pods)
	}
	// Its metrics, read as Prometheus would through the pod's port (here by kubectl port-forward).
	port, stop := s.portForward(t, chartNS, "deploy/"+release, "8080")
	defer stop()
	body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%s/metrics", port))
	if !strings.Contains(body, "controller_runtime_reconcile_total") {
		t.Fatalf("the operator's /metrics lacks controller_runtime_reconcile_total:\n%.2000s", body)
	}
}

func (s *suite) samplesRun(t *testing.T) {
	s.kubectl("apply", "--server-side", "-f", filepath.Join(helmtool.RepoRoot(), "test", "node", "testdata", "samples"))
	s.kubectl("wait", "--for=condition=Ready", "isvc,mr", "--all", "--timeout=180s")
	out := s.kubectl("get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.podIP} {.status.containerStatuses[0].containerID}{"\n"}{end}`)
	t.Logf("pods:\n%s", out)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[1] != "Running" || !strings.HasPrefix(f[3], "containerd://") {
			t.Fatalf("a pod without a running container: %q", line)
		}
	}
}

func (s *suite) openAIThroughRouter(t *testing.T) {
	c, stop := s.routerClient(t)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	answer, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "tinyllama",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := answer.Choices[0].Message.Content
	t.Logf("answer: %q", got)
	if !strings.Contains(got, "simulator") {
		t.Fatalf("the answer is not the simulator's: %q", got)
	}
	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "tinyllama",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello, slowly.")},
	})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != got || chunks < 3 {
		t.Fatalf("the stream gave %q in %d chunks; the answer was %q", acc.Choices[0].Message.Content, chunks, got)
	}
	t.Logf("stream: %d chunks", chunks)
}

// rangesStayInside checks where the node's network lives: the pod bridge and kube-proxy's rules
// for the Service range are in the node's namespace, and the machine has neither.
func (s *suite) rangesStayInside(t *testing.T) {
	inNode := func(args ...string) (string, error) {
		out, err := exec.Command("ip", append([]string{"netns", "exec", nodeName}, args...)...).CombinedOutput()
		return string(out), err
	}
	if _, err := inNode("ip", "link", "show", "llmkube0"); err != nil {
		t.Fatalf("no pod bridge in the node's namespace: %v", err)
	}
	if err := exec.Command("ip", "link", "show", "llmkube0").Run(); err == nil {
		t.Fatal("the pod bridge is on the machine")
	}
	rules, err := inNode("iptables-save")
	if err != nil || !strings.Contains(rules, devcluster.RealServiceCIDR[:len("198.18.128.")]) {
		t.Fatalf("kube-proxy's Service rules are not in the node's namespace (%v)", err)
	}
	host, err := exec.Command("iptables-save").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(host), "198.18.") {
		t.Fatalf("the machine's iptables name the node's ranges:\n%s", host)
	}
	route, _ := exec.Command("ip", "route", "show", "198.18.0.0/24").CombinedOutput()
	if strings.TrimSpace(string(route)) != "" {
		t.Fatalf("the machine routes the pod range: %s", route)
	}
}

// goMemLimit reads the limit the Go runtime of a running pod applies (its go_gc_gomemlimit_bytes
// gauge, on its metrics port) and compares it with the container's memory limit: the kubelet
// resolves the resourceFieldRef the operator (for the router) or the chart (for the operator)
// writes, and the process keeps 10% of it as headroom.
func (s *suite) goMemLimit(ns, deployment, metricsPort string) func(t *testing.T) {
	return func(t *testing.T) {
		limit := s.kubectl("-n", ns, "get", "deploy", deployment, "-o", `jsonpath={.spec.template.spec.containers[0].resources.limits.memory}`)
		q, err := resource.ParseQuantity(strings.TrimSpace(limit))
		if err != nil {
			t.Fatalf("the memory limit of %s: %q: %v", deployment, limit, err)
		}
		port, stop := s.portForward(t, ns, "deploy/"+deployment, metricsPort)
		defer stop()
		body := httpGet(t, "http://127.0.0.1:"+port+"/metrics")
		m := regexp.MustCompile(`(?m)^go_gc_gomemlimit_bytes(?:\{[^}]*\})? (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("the /metrics of %s have no go_gc_gomemlimit_bytes", deployment)
		}
		got, _ := strconv.ParseFloat(m[1], 64)
		want := float64(q.Value()) * 0.9
		t.Logf("%s: memory limit %s, GOMEMLIMIT %.0f bytes (%.3f of it)", deployment, limit, got, got/float64(q.Value()))
		if got < want-1024*1024 || got > want+1024*1024 {
			t.Fatalf("the GOMEMLIMIT of %s is %.0f bytes, want 90%% of %d = %.0f", deployment, got, q.Value(), want)
		}
	}
}

var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)

// portForward runs `kubectl port-forward` to target's port on a free local port, as a user does,
// and returns that port and a function that stops it.
func (s *suite) portForward(t *testing.T, ns, target, port string) (string, func()) {
	cmd := exec.Command("kubectl", "-n", ns, "port-forward", target, ":"+port)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := forwarding.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case p := <-found:
		return p, stop
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("kubectl port-forward %s did not forward: %s", target, stderr.String())
		return "", nil
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	var body string
	var last error
	for i := 0; i < 20; i++ {
		if body, last = httpGetOnce(url); last == nil {
			return body
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("GET %s: %v", url, last)
	return ""
}

// httpGetOnce is the body of a GET of url, or why there is none.
func httpGetOnce(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), err
}

// dumpState logs what a failed run needs to be understood: every pod, the Events, the node's
// conditions and the tails of the node's logs.
func (s *suite) dumpState() {
	for _, args := range [][]string{
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "events", "-A", "--sort-by=.lastTimestamp"},
		{"describe", "node", nodeName},
		{"logs", "-n", chartNS, "deploy/" + release, "--tail=50"},
	} {
		out, _ := s.kubectlErr(args...)
		s.t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
	}
	for _, f := range []string{"kubelet.log", "containerd.log", "kube-proxy.log"} {
		data, _ := os.ReadFile(filepath.Join(s.cluster.LogDir, f))
		lines := strings.Split(string(data), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		s.t.Logf("%s (last lines):\n%s", f, strings.Join(lines, "\n"))
	}
}
