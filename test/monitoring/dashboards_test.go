/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package monitoring

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"
)

// templateVar is a dashboard variable of its own ($namespace, $router, ${cluster}): "All" in the
// test, a regex that matches every value.
var templateVar = regexp.MustCompile(`\$\{?[a-z_]+\}?`)

// panelQuery is the query of a panel's target, with Grafana's variables replaced.
func panelQuery(t *testing.T, ds []dashboard, dashboardTitle, panelTitle string, target int) string {
	t.Helper()
	for _, d := range ds {
		if d.Title != dashboardTitle {
			continue
		}
		for _, p := range d.Panels {
			if p.Title == panelTitle && target < len(p.Targets) {
				return templateVar.ReplaceAllString(grafanaVars.Replace(p.Targets[target].Expr), ".*")
			}
		}
	}
	t.Fatalf("dashboard %q has no panel %q with a target %d", dashboardTitle, panelTitle, target)
	return ""
}

type sample struct {
	Labels string  `json:"labels"`
	Value  float64 `json:"value"`
}

// The operator dashboard's object panels show each object once with two operator replicas (each
// serves every gauge from its cache), and the conflicts panel shows a new field manager's first
// conflict (its counter is born at 1): the panels' own queries, evaluated by Prometheus' engine
// in promtool on a two-replica input.
// Proves A7.
func TestOperatorDashboardWithTwoReplicas(t *testing.T) {
	ds := dashboards(t, rendered(t))
	const op = "LLMKube / Operator"
	type exprTest struct {
		Expr       string   `json:"expr"`
		EvalTime   string   `json:"eval_time"`
		ExpSamples []sample `json:"exp_samples"`
	}
	q := func(panel string, target int, want ...sample) exprTest {
		return exprTest{Expr: panelQuery(t, ds, op, panel, target), EvalTime: "60m", ExpSamples: want}
	}
	series := func(name, labels, values string) map[string]string {
		return map[string]string{"series": name + "{" + labels + "}", "values": values}
	}
	var input []map[string]string
	for _, pod := range []string{"llmkube-a", "llmkube-b"} {
		r := `pod="` + pod + `",job="llmkube"`
		input = append(input,
			series("llmkube_inferenceservices", `namespace="ml",phase="Ready",`+r, "3x60"),
			series("llmkube_inferenceservices", `namespace="ml",phase="Progressing",`+r, "1x60"),
			series("llmkube_modelrouters", `namespace="ml",phase="Ready",`+r, "1x60"),
			series("llmkube_inferenceservice_gateways", `namespace="ml",state="accepted",`+r, "2x60"),
			series("llmkube_inferenceservice_phase", `namespace="ml",name="llama",phase="Progressing",`+r, "1x60"),
			series("llmkube_inferenceservice_replicas_ready", `namespace="ml",name="llama",`+r, "1x60"),
			series("llmkube_inferenceservice_replicas_wanted", `namespace="ml",name="llama",`+r, "2x60"),
			series("llmkube_modelrouter_backends_resolved", `namespace="ml",name="chat",`+r, "1x60"),
			series("llmkube_modelrouter_backends", `namespace="ml",name="chat",`+r, "2x60"),
			series("llmkube_inferenceservice_rollout_deferred", `namespace="ml",reason="WaitingForIdle",`+r, "1x60"),
		)
	}
	// The leader's first conflict with a new field manager, half an hour ago.
	input = append(input, series("llmkube_ownership_conflicts_total",
		`kind="Deployment",manager="argocd-controller",namespace="llmkube-system",pod="llmkube-a",job="llmkube"`, "_x30 1x30"))

	file := map[string]any{
		"rule_files":          []string{},
		"evaluation_interval": "1m",
		"tests": []map[string]any{{
			"interval":     "1m",
			"input_series": input,
			"promql_expr_test": []exprTest{
				q("InferenceServices by phase", 0, sample{`{phase="Ready"}`, 3}, sample{`{phase="Progressing"}`, 1}),
				q("ModelRouters by phase", 0, sample{`{phase="Ready"}`, 1}),
				q("Gateway status of InferenceServices", 0, sample{`{state="accepted"}`, 2}),
				q("InferenceServices not Ready", 0, sample{`{namespace="ml",name="llama",phase="Progressing"}`, 1}),
				q("Replicas ready / wanted", 0, sample{`{namespace="ml",name="llama"}`, 1}),
				q("Replicas ready / wanted", 1, sample{`{namespace="ml",name="llama"}`, 2}),
				q("Router backends resolved / listed", 0, sample{`{namespace="ml",name="chat"}`, 1}),
				q("Router backends resolved / listed", 1, sample{`{namespace="ml",name="chat"}`, 2}),
				q("Rollouts waiting at the gate", 0, sample{`{reason="WaitingForIdle"}`, 1}),
				q("Ownership conflicts taken back (per hour)", 0, sample{`{kind="Deployment",manager="argocd-controller"}`, 1}),
			},
		}},
	}
	data, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "operator-dashboard.test.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, path)
}
