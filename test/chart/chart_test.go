/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package chart_test renders charts/llmkube with the pinned helm and asserts on the objects.
package chart_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/operator/test/helmtool"
	"github.com/llmkube/operator/version"
)

const ns = "llmkube-system"

func render(t *testing.T, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := helmtool.Template(ns, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func as[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	if u == nil {
		t.Fatalf("object not rendered")
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

func exampleValues(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(helmtool.Chart(), "ci", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values in charts/llmkube/ci: %v", err)
	}
	return files
}

// Every example values file renders a Deployment that passes the restricted Pod Security Standard
// and a ClusterRole with exactly the rules generated from the markers.
func TestExampleValuesRender(t *testing.T) {
	want := configRules(t)
	for _, f := range append([]string{""}, exampleValues(t)...) {
		name := filepath.Base(f)
		var extra []string
		if f != "" {
			extra = []string{"-f", f}
		} else {
			name = "defaults"
		}
		t.Run(name, func(t *testing.T) {
			objs := render(t, extra...)
			d := as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube"))
			expectRestricted(t, &d.Spec.Template.Spec)
			if d.Spec.Template.Spec.ServiceAccountName != "llmkube" {
				t.Errorf("serviceAccountName = %q", d.Spec.Template.Spec.ServiceAccountName)
			}
			cr := as[rbacv1.ClusterRole](t, helmtool.Find(objs, "ClusterRole", "llmkube"))
			if diff := cmp.Diff(want, cr.Rules); diff != "" {
				t.Errorf("ClusterRole rules differ from config/rbac/role.yaml (-want +got):\n%s", diff)
			}
			expectNoWildcards(t, cr.Rules)
			crb := as[rbacv1.ClusterRoleBinding](t, helmtool.Find(objs, "ClusterRoleBinding", "llmkube"))
			if crb.RoleRef.Name != "llmkube" || len(crb.Subjects) != 1 || crb.Subjects[0].Kind != "ServiceAccount" ||
				crb.Subjects[0].Name != "llmkube" || crb.Subjects[0].Namespace != ns {
				t.Errorf("ClusterRoleBinding does not bind the chart's ServiceAccount: %+v %+v", crb.RoleRef, crb.Subjects)
			}
			for _, crd := range []string{"inferenceservices.inference.llmkube.dev", "modelrouters.inference.llmkube.dev", "models.inference.llmkube.dev"} {
				if helmtool.Find(objs, "CustomResourceDefinition", crd) == nil {
					t.Errorf("CRD %s not installed by the chart", crd)
				}
			}
		})
	}
}

func expectRestricted(t *testing.T, pod *corev1.PodSpec) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext is not restricted: %+v", psc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("containers = %d", len(pod.Containers))
	}
	sc := pod.Containers[0].SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no container securityContext")
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Error("runAsNonRoot not set")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem not set")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation not false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities = %+v, want drop [ALL]", sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("seccomp not RuntimeDefault")
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("privileged")
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC || len(pod.Volumes) > 0 {
		t.Errorf("pod asks for host namespaces or volumes: %+v", pod)
	}
}

func expectNoWildcards(t *testing.T, rules []rbacv1.PolicyRule) {
	t.Helper()
	for _, r := range rules {
		for _, s := range slices.Concat(r.Verbs, r.Resources, r.APIGroups) {
			if strings.Contains(s, "*") {
				t.Errorf("wildcard %q in rule %+v", s, r)
			}
		}
		if slices.Contains(r.Resources, "secrets") && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" }) {
			t.Errorf("the operator may only read Secrets: %+v", r)
		}
		// update only on leases (leader election) and on the owners' finalizers subresource, which
		// OwnerReferencesPermissionEnforcement requires for blockOwnerDeletion (nothing calls it).
		onlyFinalizers := !slices.ContainsFunc(r.Resources, func(res string) bool { return !strings.HasSuffix(res, "/finalizers") })
		for _, v := range r.Verbs {
			if v == "update" && !strings.HasSuffix(strings.Join(r.Resources, ","), "leases") && !onlyFinalizers {
				t.Errorf("update in %+v: the operator writes by server-side apply (patch)", r)
			}
		}
	}
}

// configRules reads config/rbac/role.yaml, the single source of the rules.
func configRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(helmtool.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules")
	}
	return role.Rules
}

func args(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	return as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube")).Spec.Template.Spec.Containers[0].Args
}

// An empty legacyFieldManagers list reaches the operator as an empty flag: no legacy manager, the
// migration off (a `with` would drop it, and the operator's default would migrate "manager").
func TestLegacyMigrationOff(t *testing.T) {
	got := args(t, render(t, "--set-json", "legacyFieldManagers=[]"))
	if !slices.Contains(got, "--legacy-field-managers=") {
		t.Errorf("args %q: want --legacy-field-managers= (empty)", got)
	}
}

func TestArgsFromValues(t *testing.T) {
	got := args(t, render(t))
	want := []string{
		"--field-manager=llmkube-operator",
		"--legacy-field-managers=manager",
		"--adopt-legacy-ownership=false",
		"--emit-scrape-annotations=false",
		"--cache-transform=safe",
		"--leader-elect=true",
		"--zap-log-level=info",
		"--zap-encoder=json",
		"--metrics-bind-address=:8080",
		"--health-probe-bind-address=:8081",
		"--max-concurrent-reconciles=8",
		"--router-proxy-image=ghcr.io/llmkube/router-proxy:" + appVersion(t),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default args (-want +got):\n%s", diff)
	}

	got = args(t, render(t,
		"--set", "fieldManager=acme-llm",
		"--set", "legacyFieldManagers={llmkube-controller,manager}",
		"--set", "adoptLegacyOwnership=true",
		"--set", "metrics.emitScrapeAnnotations=true",
		"--set", "leaderElection.enabled=false",
		"--set", "logLevel=debug",
		"--set", "metrics.port=9090",
		"--set", "watchNamespaces={a,b}",
		"--set", "cacheTransform=none",
		"--set", "routerProxy.image.repository=registry.example.com/proxy",
		"--set", "routerProxy.image.tag=v9",
	))
	for _, a := range []string{
		"--field-manager=acme-llm",
		"--legacy-field-managers=llmkube-controller,manager",
		"--adopt-legacy-ownership=true",
		"--emit-scrape-annotations=true",
		"--leader-elect=false",
		"--zap-log-level=debug",
		"--metrics-bind-address=:9090",
		"--watch-namespaces=a,b",
		"--cache-transform=none",
		"--router-proxy-image=registry.example.com/proxy:v9",
	} {
		if !slices.Contains(got, a) {
			t.Errorf("args %q lack %q", got, a)
		}
	}
}

// appVersion is the chart's appVersion; the operator's built-in version must be the same, since it
// tags the default router-proxy image of a binary run without the chart.
func appVersion(t *testing.T) string {
	t.Helper()
	chart, err := os.ReadFile(filepath.Join(helmtool.Chart(), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(chart, &c); err != nil {
		t.Fatal(err)
	}
	if c.AppVersion != version.Version {
		t.Fatalf("Chart.yaml appVersion %q differs from version.Version %q", c.AppVersion, version.Version)
	}
	return c.AppVersion
}

// The chart's args are flags the binary knows: a flag the chart passes and main.go lacks would
// crash the pod at start.
func TestArgsAreOperatorFlags(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(helmtool.RepoRoot(), "cmd", "operator", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	all := args(t, render(t, "-f", filepath.Join(helmtool.Chart(), "ci", "production-values.yaml")))
	for _, a := range all {
		name := strings.SplitN(strings.TrimPrefix(a, "--"), "=", 2)[0]
		if name == "zap-log-level" || name == "zap-encoder" {
			continue // bound by zap.Options.BindFlags
		}
		if !strings.Contains(string(src), `"`+name+`"`) {
			t.Errorf("chart passes --%s, which cmd/operator/main.go does not define", name)
		}
	}
}

func TestPodPlacementAndMetadata(t *testing.T) {
	objs := render(t, "-f", filepath.Join(helmtool.Chart(), "ci", "production-values.yaml"))
	d := as[appsv1.Deployment](t, helmtool.Find(objs, "Deployment", "llmkube"))
	pod := d.Spec.Template
	if pod.Labels["team"] != "platform" || pod.Annotations["example.com/owner"] != "platform" {
		t.Errorf("podLabels/podAnnotations missing: %v %v", pod.Labels, pod.Annotations)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("selector label %s=%s not on the pod template", k, v)
		}
	}
	if pod.Spec.NodeSelector["kubernetes.io/os"] != "linux" || len(pod.Spec.Tolerations) != 1 || pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil {
		t.Errorf("placement not passed: %+v %+v %+v", pod.Spec.NodeSelector, pod.Spec.Tolerations, pod.Spec.Affinity)
	}
	if *d.Spec.Replicas != 2 || len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.Containers[0].Image != "registry.example.com/llmkube/operator:v0.1.0" {
		t.Errorf("replicas/pull secrets/image: %d %v %s", *d.Spec.Replicas, pod.Spec.ImagePullSecrets, pod.Spec.Containers[0].Image)
	}
	// Prometheus Operator objects as asked: the operator's ServiceMonitor and the inference PodMonitor.
	if helmtool.Find(objs, "ServiceMonitor", "llmkube") == nil {
		t.Error("no ServiceMonitor")
	}
	pm := helmtool.Find(objs, "PodMonitor", "llmkube-inference")
	if pm == nil {
		t.Fatal("no inference PodMonitor")
	}
	port, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	if len(port) != 1 || port[0].(map[string]any)["port"] != "http" {
		t.Errorf("inference PodMonitor endpoints = %v", port)
	}
	// The Router dashboard's model-server panels group by the InferenceService's name.
	if rl, _, _ := unstructured.NestedSlice(port[0].(map[string]any), "relabelings"); len(rl) != 1 ||
		rl[0].(map[string]any)["targetLabel"] != "inferenceservice" ||
		fmt.Sprint(rl[0].(map[string]any)["sourceLabels"]) != "[__meta_kubernetes_pod_label_inference_llmkube_dev_service]" {
		t.Errorf("inference PodMonitor relabelings = %v, want the service label as inferenceservice", rl)
	}
	if helmtool.Find(objs, "Role", "llmkube-leader-election") == nil || helmtool.Find(objs, "Service", "llmkube-metrics") == nil {
		t.Error("leader-election Role or metrics Service missing")
	}

	// Defaults: no Prometheus Operator objects (their CRDs may not exist).
	for _, o := range render(t) {
		if o.GetKind() == "PodMonitor" || o.GetKind() == "ServiceMonitor" {
			t.Errorf("%s rendered by default", o.GetKind())
		}
	}
}

// Proves H3.
func TestValuesRejected(t *testing.T) {
	for name, set := range map[string][]string{
		"unknown log level":      {"logLevel=loud"},
		"empty field manager":    {"fieldManager="},
		"field manager list":     {"fieldManager=a,b"},
		"unknown key":            {"fieldManagr=x"},
		"pull policy":            {"image.pullPolicy=Sometimes"},
		"legacy managers type":   {"legacyFieldManagers=manager"},
		"adopt not a bool":       {"adoptLegacyOwnership=maybe"},
		"double scrape":          {"metrics.emitScrapeAnnotations=true", "metrics.inferencePodMonitor.enabled=true"},
		"replicas without lease": {"replicaCount=2", "leaderElection.enabled=false"},
		"bad port":               {"metrics.port=70000"},
	} {
		t.Run(name, func(t *testing.T) {
			var extra []string
			for _, s := range set {
				extra = append(extra, "--set", s)
			}
			if _, err := helmtool.Template(ns, extra...); err == nil {
				t.Errorf("helm template accepted %v", set)
			}
		})
	}
}

// The CRDs the chart installs are the generated ones, byte for byte (make verify checks it too).
func TestCRDsMatchConfig(t *testing.T) {
	want, _ := filepath.Glob(filepath.Join(helmtool.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	got, _ := filepath.Glob(filepath.Join(helmtool.Chart(), "files", "crds", "*.yaml"))
	if len(want) == 0 || len(want) != len(got) {
		t.Fatalf("config has %d CRDs, the chart %d", len(want), len(got))
	}
	for _, w := range want {
		a, _ := os.ReadFile(w)
		b, err := os.ReadFile(filepath.Join(helmtool.Chart(), "files", "crds", filepath.Base(w)))
		if err != nil || string(a) != string(b) {
			t.Errorf("charts/llmkube/files/crds/%s differs from config/crd/bases: run make manifests", filepath.Base(w))
		}
	}
}
