/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/llmkube/operator/internal/chartdoc"
	"github.com/llmkube/operator/test/helmtool"
	"github.com/llmkube/operator/test/kubescore"
)

// The conventions users expect of a chart: overridable names, a digest-pinned image, security
// contexts the platform may complete, extra flags and env, and the HA pieces.

func TestNameOverrides(t *testing.T) {
	objs := render(t, "--set", "nameOverride=inference")
	d := as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube-inference"))
	if d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "inference" {
		t.Errorf("selector = %v, want app.kubernetes.io/name=inference", d.Spec.Selector.MatchLabels)
	}
	objs = render(t, "--set", "fullnameOverride=op")
	for _, kind := range []string{"Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		if helmtool.Find(objs, kind, "op") == nil {
			t.Errorf("no %s named op with fullnameOverride=op", kind)
		}
	}
}

func TestImageDigestWinsOverTag(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	objs := render(t, "--set", "image.tag=v9", "--set", "image.digest="+digest, "--set", "routerProxy.image.digest="+digest)
	d := as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube"))
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "ghcr.io/llmkube/operator@"+digest {
		t.Errorf("image = %s", c.Image)
	}
	if !slices.Contains(c.Args, "--router-proxy-image=ghcr.io/llmkube/router-proxy@"+digest) {
		t.Errorf("args = %v, want the router-proxy image by digest", c.Args)
	}
	if _, err := helmtool.Template(ns, "--set", "image.digest=latest"); err == nil {
		t.Error("a digest that is not sha256:<64 hex> was accepted")
	}
}

// OpenShift's restricted-v2 assigns the UID: the values can leave it out and the pod stays restricted.
func TestPlatformMayChooseTheUID(t *testing.T) {
	objs := render(t, "-f", filepath.Join(helmtool.Chart(), "ci", "openshift-values.yaml"))
	d := as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube"))
	psc := d.Spec.Template.Spec.SecurityContext
	if psc.RunAsUser != nil || psc.RunAsGroup != nil {
		t.Errorf("runAsUser %v runAsGroup %v, want both left to the platform", psc.RunAsUser, psc.RunAsGroup)
	}
	expectRestricted(t, &d.Spec.Template.Spec)
}

func TestExtraArgsAndEnv(t *testing.T) {
	objs := render(t, "--set", "extraArgs[0]=--kube-api-qps=50", "--set", "extraEnv[0].name=GOMEMLIMIT", "--set", "extraEnv[0].value=200MiB")
	c := as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube")).Spec.Template.Spec.Containers[0]
	if c.Args[len(c.Args)-1] != "--kube-api-qps=50" {
		t.Errorf("args = %v, want --kube-api-qps=50 last", c.Args)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" && e.Value == "200MiB" }) {
		t.Errorf("env = %v", c.Env)
	}
}

// Proves H3.
func TestHighAvailabilityValues(t *testing.T) {
	objs := render(t, "-f", filepath.Join(helmtool.Chart(), "ci", "ha-values.yaml"))
	d := as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube"))
	if *d.Spec.Replicas != 2 || !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--leader-elect=true") {
		t.Errorf("replicas %d args %v, want 2 with --leader-elect=true", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Args)
	}
	pdb := as[policyv1.PodDisruptionBudget](t, helmtool.Find(objs, "PodDisruptionBudget", "llmkube"))
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "llmkube" {
		t.Errorf("PodDisruptionBudget = %+v", pdb.Spec)
	}
	tsc := d.Spec.Template.Spec.TopologySpreadConstraints
	if len(tsc) != 2 || tsc[0].LabelSelector == nil || tsc[0].LabelSelector.MatchLabels["app.kubernetes.io/instance"] != "llmkube" {
		t.Errorf("topologySpreadConstraints = %+v, want two selecting the operator's pods", tsc)
	}
	np := as[networkingv1.NetworkPolicy](t, helmtool.Find(objs, "NetworkPolicy", "llmkube"))
	if len(np.Spec.Ingress) != 2 || np.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] != "operator" {
		t.Errorf("NetworkPolicy = %+v", np.Spec)
	}
	for _, o := range render(t) {
		if o.GetKind() == "PodDisruptionBudget" || o.GetKind() == "NetworkPolicy" {
			t.Errorf("%s rendered by default", o.GetKind())
		}
	}
	if _, err := helmtool.Template(ns, "--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.maxUnavailable=1"); err == nil {
		t.Error("a PodDisruptionBudget with both minAvailable and maxUnavailable was accepted")
	}
}

// crds.install: the CRDs come with the release, marked to stay on `helm uninstall`; false leaves
// them out for whoever manages them.
// Proves H4.
func TestCRDsInstallAndStayOnUninstall(t *testing.T) {
	crds := 0
	for _, o := range render(t) {
		if o.GetKind() == "CustomResourceDefinition" {
			crds++
			if o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("CRD %s lacks helm.sh/resource-policy: keep", o.GetName())
			}
		}
	}
	if crds != 3 {
		t.Errorf("%d CRDs rendered, want 3", crds)
	}
	for _, o := range render(t, "--set", "crds.install=false") {
		if o.GetKind() == "CustomResourceDefinition" {
			t.Errorf("CRD %s rendered with crds.install=false", o.GetName())
		}
	}
}

// kube-score passes on the chart with its defaults and every example values file, ignoring only
// what hack/kube-score.ignore names.
func TestKubeScore(t *testing.T) {
	for _, f := range append([]string{""}, exampleValues(t)...) {
		name, extra := "defaults", []string{}
		if f != "" {
			name, extra = filepath.Base(f), []string{"-f", f}
		}
		t.Run(name, func(t *testing.T) {
			out, err := helmtool.Run(append([]string{"template", "llmkube", helmtool.Chart(), "--namespace", ns}, extra...)...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kubescore.Score(out); err != nil {
				t.Error(err)
			}
		})
	}
}

// The chart's README is generated from values.yaml's comments: run `go run ./hack/chartdoc`.
func TestChartReadmeIsGenerated(t *testing.T) {
	header, err := os.ReadFile(filepath.Join(helmtool.Chart(), "README.header.md"))
	if err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile(filepath.Join(helmtool.Chart(), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := chartdoc.Render(string(header), values)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(helmtool.Chart(), "README.md"))
	if string(got) != string(want) {
		t.Error("charts/llmkube/README.md is stale: run `go run ./hack/chartdoc`")
	}
	for _, key := range []string{"`image.digest`", "`podSecurityContext`", "`crds.install`", "`networkPolicy.enabled`"} {
		if !strings.Contains(string(want), key) {
			t.Errorf("the README has no row for %s", key)
		}
	}
}
