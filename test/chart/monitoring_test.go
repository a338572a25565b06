/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/test/helmtool"
)

// The router PodMonitor selects the proxy pods by the label the operator puts on them, scrapes the
// port the operator names metrics; the router label is the proxy's own.
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
	// The router label comes from the proxy itself (--router-name): a relabelling into router
	// would turn the proxy's own label into exported_router.
	rl, _, _ := unstructured.NestedSlice(ep, "relabelings")
	for _, r := range rl {
		if r.(map[string]any)["targetLabel"] == "router" {
			t.Errorf("the router PodMonitor relabels into router (%v): the proxy's own router label would become exported_router", r)
		}
	}
	args := modelrouter.Deployment(&inferencev1alpha1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Name: "chat", Namespace: "ml"}}, modelrouter.Inputs{}).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--router-name=chat") {
		t.Errorf("the proxy of ModelRouter chat runs with %v: without --router-name=chat its series carry no router label", args)
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
		"bad log format":       {"logFormat=text"},
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

// Values that would install something broken on day one are refused with a message naming them.
// Proves A8.
func TestValuesThatBreakOnCallAreRefusedByName(t *testing.T) {
	for name, c := range map[string]struct {
		set  []string
		want string
	}{
		"operator scraped twice": {[]string{"metrics.serviceMonitor.enabled=true", "metrics.podMonitor.enabled=true"},
			"metrics.serviceMonitor.enabled and metrics.podMonitor.enabled"},
		"budget blocks every drain": {[]string{"podDisruptionBudget.enabled=true"},
			"podDisruptionBudget.minAvailable (1) is not below replicaCount (1)"},
		"budget of no unavailable pod": {[]string{"podDisruptionBudget.enabled=true", "podDisruptionBudget.minAvailable=null",
			"podDisruptionBudget.maxUnavailable=0"}, "podDisruptionBudget.maxUnavailable is 0"},
	} {
		t.Run(name, func(t *testing.T) {
			var extra []string
			for _, s := range c.set {
				extra = append(extra, "--set", s)
			}
			_, err := helmtool.Template(ns, extra...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("helm template %v: %v; want a refusal naming %q", c.set, err, c.want)
			}
		})
	}
	// Two replicas keep one through a drain: accepted.
	render(t, "--set", "podDisruptionBudget.enabled=true", "--set", "replicaCount=2", "--set", "leaderElection.enabled=true")
}
