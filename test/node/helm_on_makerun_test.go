/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/operator/test/docblocks"
)

// helmOnMakeRun runs the README's one command that installs the chart on make run's running
// cluster, then checks what docs/dev-cluster.md promises of it: the release adopts the CRDs make
// run installed, make run's operator stands down and the chart's holds the Lease, no pod of the
// quick start rolls for the handover, and the chart's operator is the one that reconciles: an
// edit of the InferenceService reaches its Deployment.
//
// Proves N19.
func helmOnMakeRun(t *testing.T, root string, run *makeRun, kubectl func(...string) string) {
	t.Helper()
	blocks, err := docblocks.Runnable(filepath.Join(root, "README.md"), "helm-on-make-run")
	if err != nil {
		t.Fatal(err)
	}
	const generations = `jsonpath={range .items[*]}{.metadata.name}={.metadata.generation}{" "}{end}`
	before := kubectl("get", "deploy", "-n", "default", "-o", generations)
	// Before the chart, make run's operator (a process on this host) holds the chart's Lease: the
	// chart's operator can only wait for it.
	host, _ := os.Hostname()
	const leaseHolder = "jsonpath={.spec.holderIdentity}"
	if got := kubectl("-n", "llmkube-system", "get", "lease", "llmkube-operator.inference.llmkube.dev", "-o", leaseHolder); !strings.HasPrefix(got, host+"_") {
		t.Fatalf("before the chart, the Lease is held by %q, not by make run's operator on %s", got, host)
	}
	start := time.Now()
	outs, err := docblocks.Run(root, blocks)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSpace(outs[len(outs)-1])
	t.Logf("make helm-install took %s; its last line: %s", time.Since(start).Round(time.Second), out[strings.LastIndex(out, "\n")+1:])
	if !strings.Contains(out, "The chart's operator llmkube-system/") || !strings.Contains(out, "leads") {
		t.Fatalf("make helm-install did not end with the chart's operator leading:\n%s", out)
	}
	for _, crd := range []string{"inferenceservices", "models", "modelrouters"} {
		if got := kubectl("get", "crd", crd+".inference.llmkube.dev", "-o", `jsonpath={.metadata.annotations.meta\.helm\.sh/release-name}`); got != "llmkube" {
			t.Errorf("the CRD %s belongs to release %q, want llmkube", crd, got)
		}
	}
	holder := kubectl("-n", "llmkube-system", "get", "lease", "llmkube-operator.inference.llmkube.dev", "-o", leaseHolder)
	chartPods := kubectl("-n", "llmkube-system", "get", "pods", "-l", "app.kubernetes.io/component=operator", "-o", "jsonpath={.items[*].metadata.name}")
	if name, _, _ := strings.Cut(holder, "_"); name == "" || !strings.Contains(" "+chartPods+" ", " "+name+" ") {
		t.Fatalf("the Lease is held by %q, not by a pod of the chart's operator (%s)", holder, chartPods)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(run.output(), "this one has stood down") {
		if time.Now().After(deadline) {
			t.Fatal("make run's operator printed no stand-down line")
		}
		time.Sleep(time.Second)
	}
	// The chart's operator has reconciled everything once (its first list) by the time it leads
	// and the edit below reaches the Deployment: a roll the handover caused would show here.
	kubectl("patch", "isvc", "tinyllama", "--type=merge", "-p", `{"spec":{"podLabels":{"operator":"chart"}}}`)
	deadline = time.Now().Add(90 * time.Second)
	for kubectl("get", "deploy", "tinyllama", "-o", "jsonpath={.spec.template.metadata.labels.operator}") != "chart" {
		if time.Now().After(deadline) {
			t.Fatal("after the handover an edit of the InferenceService did not reach its Deployment in 90s: no operator reconciles")
		}
		time.Sleep(time.Second)
	}
	kubectl("rollout", "status", "deploy/tinyllama", "--timeout=120s")
	// One template change each at most: the edit's for tinyllama, none for the router. A
	// handover that rolled a pod would have moved a generation once more.
	after := kubectl("get", "deploy", "-n", "default", "-o", generations)
	t.Logf("Deployment generations before the handover: %s; after it and the edit: %s", before, after)
	want := map[string]int{"tinyllama": 1, "router-router-proxy": 0}
	was := map[string]int{}
	for _, f := range strings.Fields(before) {
		name, g, _ := strings.Cut(f, "=")
		was[name], _ = strconv.Atoi(g)
	}
	for _, f := range strings.Fields(after) {
		name, g, _ := strings.Cut(f, "=")
		n, _ := strconv.Atoi(g)
		if d, ok := want[name]; ok && n-was[name] != d {
			t.Errorf("Deployment %s went from generation %d to %d across the handover and the edit, want +%d", name, was[name], n, d)
		}
	}
}
