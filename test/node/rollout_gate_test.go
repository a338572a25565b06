/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/llmkube/operator/test/helmtool"
)

// gatedSample is the tinyllama sample with the rollout gate on and a slow simulator.
var gatedSample = filepath.Join(helmtool.RepoRoot(), "test", "node", "testdata", "rollout", "tinyllama.yaml")

// slowReply is the answer of the gated sample's simulator, word by word as it streams.
func slowReply(t *testing.T) []string {
	data, err := os.ReadFile(gatedSample)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`--reply=(.*)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s sets no --reply", gatedSample)
	}
	return strings.Fields(string(m[1]))
}

// labelRemovalWaitsForIdle is the README's label story on real pods, with the rollout gate on:
// another tool adds a pod-template label under a field manager of its own, then the user drops
// `team` from the InferenceService while a stream runs through the router to its pod. The gate
// holds that pure removal back (RolloutDeferred, read from the simulator's
// vllm:num_requests_running; the pod stays) until the stream has ended whole, then a ReplicaSet
// rollout replaces the pod with one that lacks `team` and keeps the other tool's key.
func (s *suite) labelRemovalWaitsForIdle(t *testing.T) {
	s.applySettled(t, "isvc/tinyllama", "tinyllama", gatedSample)
	s.kubectl("patch", "deployment", "tinyllama", "--field-manager=mesh-injector",
		"-p", `{"spec":{"template":{"metadata":{"labels":{"mesh.example.com/injected":"true"}}}}}`)
	s.kubectl("rollout", "status", "deployment/tinyllama", "--timeout=120s")
	// The rollout is done when the new pod is available; the old one may still be terminating.
	var pods string
	s.eventually(t, 60*time.Second, func() error {
		if pods = s.podUIDs(t, "app=tinyllama"); strings.Contains(pods, " ") {
			return fmt.Errorf("more than one tinyllama pod: %s", pods)
		}
		return nil
	})

	c, stop := s.routerClient(t)
	defer stop()
	const tokens = 20 // 10 s at the sample's 2 tokens a second
	done := openStream(t, c, "tinyllama", tokens)
	s.kubectl("apply", "--server-side", "-f", withoutTeam(t))

	// While the stream runs: the gate says it waits for the busy pod, the template keeps `team`,
	// the pod is the same one.
	var said string
	var r *streamed
	for r == nil {
		select {
		case got := <-done:
			r = &got
		case <-time.After(250 * time.Millisecond):
		}
		if now := s.podUIDs(t, "app=tinyllama"); now != pods {
			t.Fatalf("the pod was replaced while a stream was in flight: %s, then %s", pods, now)
		}
		if said == "" {
			said = s.deferral(t)
		}
	}
	if said == "" {
		t.Fatalf("the stream ended (%d chunks) and the gate never said RolloutDeferred while it ran", r.chunks)
	}
	t.Logf("while the stream ran: %s", said)
	want := strings.Join(slowReply(t)[:tokens], " ")
	if r.err != nil || r.chunks != tokens || r.content != want {
		t.Fatalf("the stream held by the gate ended with %v after %d chunks: %q, want %q", r.err, r.chunks, r.content, want)
	}

	// Idle now: the removal rolls.
	s.kubectl("wait", "--for=delete", "pod", "-l", "app=tinyllama,team=research", "--timeout=60s")
	s.kubectl("rollout", "status", "deployment/tinyllama", "--timeout=120s")
	out := s.kubectl("get", "pods", "-l", "app=tinyllama", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase} team={.metadata.labels.team} mesh={.metadata.labels.mesh\.example\.com/injected} {.status.containerStatuses[0].containerID}{"\n"}{end}`)
	t.Logf("tinyllama pods after the removal:\n%s", out)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, " Running team= mesh=true containerd://") {
			t.Fatalf("want a running pod without team and with the other tool's key: %q", line)
		}
	}
	s.eventually(t, 30*time.Second, func() error {
		if c := s.kubectl("get", "isvc", "tinyllama", "-o", `jsonpath={.status.conditions[?(@.type=="RolloutDeferred")].reason}`); c != "" {
			return fmt.Errorf("RolloutDeferred is still %s after the rollout", c)
		}
		return nil
	})
}

// withoutTeam is the gated sample with its podLabels block removed, as the README's sed does.
func withoutTeam(t *testing.T) string {
	data, err := os.ReadFile(gatedSample)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "  podLabels:\n    team: research\n", "", 1)
	if edited == string(data) {
		t.Fatal("the sample has no podLabels block to remove")
	}
	f := filepath.Join(t.TempDir(), "inferenceservice.yaml")
	if err := os.WriteFile(f, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// deferral is what tinyllama's status says while the gate holds its template back, or "" while
// it says nothing of the kind yet: RolloutDeferred=True with reason WaitingForIdle, a message that
// counts the pod busy by its metric (not because its metrics were unreadable), and
// observedGeneration behind generation (kstatus: not done).
func (s *suite) deferral(t *testing.T) string {
	out := s.kubectl("get", "isvc", "tinyllama", "-o", `jsonpath={.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="RolloutDeferred")].reason}: {.status.conditions[?(@.type=="RolloutDeferred")].message}`)
	gen, rest, _ := strings.Cut(out, " ")
	observed, cond, _ := strings.Cut(rest, " ")
	if !strings.HasPrefix(cond, "WaitingForIdle: 1 of 1 pods busy (vllm:num_requests_running)") || strings.Contains(cond, "unreadable") {
		return ""
	}
	if observed == gen {
		t.Fatalf("RolloutDeferred is True but observedGeneration %s is the generation: %s", observed, cond)
	}
	return "generation " + gen + ", observedGeneration " + observed + ", RolloutDeferred " + cond
}

// podUIDs is the UIDs of the pods selected by selector, as one string.
func (s *suite) podUIDs(t *testing.T, selector string) string {
	return strings.TrimSpace(s.kubectl("get", "pods", "-l", selector, "-o", `jsonpath={.items[*].metadata.uid}`))
}

// applySettled applies file and waits until obj (kind/name) reports its new generation observed
// and deployment, the Deployment the operator writes for it, has rolled out.
func (s *suite) applySettled(t *testing.T, obj, deployment, file string) {
	s.kubectl("apply", "--server-side", "-f", file)
	gen := s.kubectl("get", obj, "-o", "jsonpath={.metadata.generation}")
	s.kubectl("wait", obj, "--for=jsonpath={.status.observedGeneration}="+gen, "--timeout=120s")
	s.kubectl("rollout", "status", "deployment/"+deployment, "--timeout=120s")
}

// eventually retries check every half second until it passes, and fails the test with its last
// error after timeout.
func (s *suite) eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("after %s: %v", timeout, last)
	}
}
