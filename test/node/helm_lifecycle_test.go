/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/operator/test/helmtool"
)

// localImages are the helm values that select the images `make images` built and the node loaded.
var localImages = []string{"--set", "image.repository=localhost/llmkube/operator",
	"--set", "routerProxy.image.repository=localhost/llmkube/router-proxy"}

// previousChart is the chart the upgrade starts from: hack/previous-chart.sh packaged it from the
// commit in COMMIT beside it (no release has been tagged yet).
var previousChart = filepath.Join(helmtool.RepoRoot(), "test", "node", "testdata", "previous-chart", "llmkube-0.1.0.tgz")

// helmUninstall checks what docs/install.md says `helm uninstall` leaves: the CRDs and every
// custom resource, and with them the workloads the operator made (their pods keep running and
// serving, unmanaged); everything else the release installed is gone.
func (s *suite) helmUninstall(t *testing.T) {
	manifest, err := s.helm("get", "manifest", release, "-n", chartNS)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := helmtool.Split([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	kept := s.inventory(t)
	if _, err := s.helm("uninstall", release, "-n", chartNS, "--wait", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	crds := 0
	for _, o := range objs {
		ns := o.GetNamespace()
		if ns == "" {
			ns = chartNS
		}
		left := strings.TrimSpace(s.kubectl("get", o.GetKind(), o.GetName(), "-n", ns, "--ignore-not-found", "-o", "name"))
		switch {
		case o.GetKind() == "CustomResourceDefinition":
			crds++
			if left == "" {
				t.Errorf("helm uninstall deleted the CRD %s", o.GetName())
			}
		case left != "":
			t.Errorf("helm uninstall left the release's %s", left)
		}
	}
	if crds != 3 {
		t.Errorf("the release held %d CRDs, want 3", crds)
	}
	if now := s.inventory(t); now != kept {
		t.Fatalf("helm uninstall changed the custom resources or their pods:\nbefore:\n%s\nafter:\n%s", kept, now)
	}
	c, stop := s.routerClient(t)
	defer stop()
	if got, err := firstWord(c, "tinyllama"); err != nil || got == "" {
		t.Fatalf("after helm uninstall the router answers %q (%v)", got, err)
	}
	t.Logf("kept, and still serving:\n%s", kept)
}

// helmUpgrade installs the previous chart (it adopts the CRDs the uninstall kept and writes its
// own, older schema into them), then `helm upgrade`s to this chart as docs/install.md says: the
// CRDs are upgraded with the release, the operator's Deployment rolls to the new template, and
// the custom resources and their pods stay as they were.
func (s *suite) helmUpgrade(t *testing.T) {
	install := append([]string{"install", release, previousChart, "-n", chartNS, "--wait", "--timeout", "3m"}, localImages...)
	if _, err := s.helm(install...); err != nil {
		t.Fatal(err)
	}
	const clients = `jsonpath={.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.clients.type}`
	if got := s.kubectl("get", "crd", "modelrouters.inference.llmkube.dev", "-o", clients); got != "" {
		t.Fatalf("the previous chart's ModelRouter CRD has spec.clients (%s): the upgrade would prove nothing", got)
	}
	if env := s.operatorEnv(t); strings.Contains(env, "GOMEMLIMIT") {
		t.Fatalf("the previous chart's operator already has GOMEMLIMIT: %s", env)
	}
	kept := s.inventory(t)

	upgrade := append([]string{"upgrade", release, helmtool.Chart(), "-n", chartNS, "--wait", "--timeout", "3m"}, localImages...)
	if _, err := s.helm(upgrade...); err != nil {
		t.Fatal(err)
	}
	if got := s.kubectl("get", "crd", "modelrouters.inference.llmkube.dev", "-o", clients); got != "array" {
		t.Fatalf("after helm upgrade the ModelRouter CRD's spec.clients is %q, want this chart's array", got)
	}
	if env := s.operatorEnv(t); !strings.Contains(env, "GOMEMLIMIT") {
		t.Fatalf("after helm upgrade the operator has no GOMEMLIMIT: %s", env)
	}
	s.kubectl("-n", chartNS, "rollout", "status", "deploy/"+release, "--timeout=120s")
	// The new operator has reconciled every object once (its initial list) before the pods are
	// compared: a roll it caused would show.
	port, stop := s.portForward(t, chartNS, "deploy/"+release, "8080")
	defer stop()
	s.eventually(t, 60*time.Second, func() error {
		body, err := httpGetOnce("http://127.0.0.1:" + port + "/metrics")
		if err != nil {
			return err
		}
		for _, c := range []string{"inferenceservice", "modelrouter"} {
			if !strings.Contains(body, `controller_runtime_reconcile_total{controller="`+c+`",result="success"}`) {
				return fmt.Errorf("the upgraded operator has not reconciled a %s yet", c)
			}
		}
		return nil
	})
	if now := s.inventory(t); now != kept {
		t.Fatalf("helm upgrade changed the custom resources or their pods:\nbefore:\n%s\nafter:\n%s", kept, now)
	}
}

// inventory lists what must outlive the operator's release: the CRDs, every custom resource and
// every pod in the samples' namespace, by UID (and each pod's restarts).
func (s *suite) inventory(t *testing.T) string {
	crds := s.kubectl("get", "crd", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`)
	crs := s.kubectl("get", "isvc,mr,models.inference.llmkube.dev", "-A", "-o", `jsonpath={range .items[*]}{.kind}/{.metadata.name} {.metadata.uid}{"\n"}{end}`)
	pods := s.kubectl("get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.uid} {.status.phase} {.status.containerStatuses[0].restartCount}{"\n"}{end}`)
	return crds + crs + pods
}

// operatorEnv is the names of the operator container's environment variables.
func (s *suite) operatorEnv(t *testing.T) string {
	return s.kubectl("-n", chartNS, "get", "deploy", release, "-o", `jsonpath={.spec.template.spec.containers[0].env[*].name}`)
}

// helm runs the pinned helm against the suite's cluster.
func (s *suite) helm(args ...string) (string, error) {
	cmd := helmtool.Command(args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
