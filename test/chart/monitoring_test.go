/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/test/helmtool"
)

// The router PodMonitor selects the proxy pods by the label the operator puts on them, scrapes the
// port the operator names metrics, and copies the router's name from that label.
func TestRouterPodMonitorSelectsTheProxyPods(t *testing.T) {
	pm := helmtool.Find(render(t, "--set", "metrics.routerPodMonitor.enabled=true"), "PodMonitor", "llmkube-router-proxy")
	if pm == nil {
		t.Fatal("no router PodMonitor rendered")
	}
	exprs, _, _ := unstructured.NestedSlice(pm.Object, "spec", "selector", "matchExpressions")
	if len(exprs) != 1 {
		t.Fatalf("matchExpressions = %v", exprs)
	}
	e := exprs[0].(map[string]any)
	if _, ok := modelrouter.SelectorLabels("r")[e["key"].(string)]; !ok || e["operator"] != "Exists" {
		t.Errorf("selector %v is not Exists on a label of the proxy pods (%v)", e, modelrouter.SelectorLabels("r"))
	}
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	ep := eps[0].(map[string]any)
	if ep["port"] != modelrouter.MetricsPortName {
		t.Errorf("port %v, the proxy's metrics port is named %s", ep["port"], modelrouter.MetricsPortName)
	}
	relabel := ep["relabelings"].([]any)[0].(map[string]any)
	meta := "__meta_kubernetes_pod_label_" + strings.NewReplacer(".", "_", "/", "_", "-", "_").Replace(modelrouter.LabelModelRouter)
	if src := relabel["sourceLabels"].([]any); len(src) != 1 || src[0] != meta || relabel["targetLabel"] != "router" {
		t.Errorf("relabeling %v, want %s -> router", relabel, meta)
	}
}

// Nothing of the monitoring bundle renders unless asked for.
func TestMonitoringBundleOffByDefault(t *testing.T) {
	for _, o := range render(t) {
		if o.GetKind() == "PrometheusRule" || o.GetLabels()["grafana_dashboard"] != "" {
			t.Errorf("%s %s rendered by default", o.GetKind(), o.GetName())
		}
	}
}

// Proves H3.
func TestMonitoringValuesRejected(t *testing.T) {
	for name, set := range map[string][]string{
		"router double scrape": {"metrics.emitScrapeAnnotations=true", "metrics.routerPodMonitor.enabled=true"},
		"ratio above 1":        {"metrics.prometheusRule.router5xxRatio=2"},
		"bad duration":         {"metrics.prometheusRule.notReadyFor=soon"},
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
