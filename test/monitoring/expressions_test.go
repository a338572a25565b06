/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package monitoring

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/runtimes"
	"github.com/llmkube/operator/test/helmtool"
	"github.com/llmkube/operator/test/metricsdoc"
)

// expression is one PromQL expression the chart ships, and where: dashboard is the title of the
// dashboard it is on, empty for an alert.
type expression struct {
	where, expr, dashboard string
}

// rendered is the chart as helm renders it with the production example values, which turn on the
// PrometheusRule and the dashboards: the test checks what ships, thresholds and all.
func rendered(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := helmtool.Template("llmkube-system", "-f", filepath.Join(helmtool.Chart(), "ci", "production-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// ruleExpressions loads the PrometheusRule's spec with Prometheus' own rule-file loader (the
// checks `promtool check rules` makes: syntax, durations, templates of labels and annotations,
// PromQL) and returns every expression.
func ruleExpressions(t *testing.T, objs []*unstructured.Unstructured) []expression {
	t.Helper()
	u := helmtool.Find(objs, "PrometheusRule", "llmkube")
	if u == nil {
		t.Fatal("no PrometheusRule rendered")
	}
	spec, err := yaml.Marshal(u.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(spec, false, model.LegacyValidation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatalf("the PrometheusRule is not a valid rule file: %v", errs)
	}
	var out []expression
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out = append(out, expression{where: "alert " + r.Alert, expr: r.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatal("the PrometheusRule has no rule")
	}
	return out
}

// Grafana's variables, replaced by values of the same type before parsing.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// labelValuesRE is a Grafana variable's query: label_values(selector, label).
var labelValuesRE = regexp.MustCompile(`^label_values\((.*), *[a-zA-Z_]+\)$`)

// dashboard is what the tests read of a Grafana dashboard's JSON.
type dashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		GridPos struct {
			H, W, X, Y int
		} `json:"gridPos"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Query      any    `json:"query"`
			IncludeAll bool   `json:"includeAll"`
			AllValue   string `json:"allValue"`
			Hide       int    `json:"hide"`
		} `json:"list"`
	} `json:"templating"`
}

// dashboards parses the dashboard ConfigMaps the chart rendered.
func dashboards(t *testing.T, objs []*unstructured.Unstructured) []dashboard {
	t.Helper()
	var out []dashboard
	for _, u := range objs {
		if u.GetKind() != "ConfigMap" || u.GetLabels()["grafana_dashboard"] == "" {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		for key, text := range data {
			var d dashboard
			if err := json.Unmarshal([]byte(text), &d); err != nil {
				t.Fatalf("dashboard %s/%s: %v", u.GetName(), key, err)
			}
			out = append(out, d)
		}
	}
	if len(out) != 2 {
		t.Fatalf("%d dashboards rendered, want 2 (operator, router)", len(out))
	}
	return out
}

// dashboardExpressions returns the query of every panel target and variable of the dashboard
// ConfigMaps.
func dashboardExpressions(t *testing.T, objs []*unstructured.Unstructured) []expression {
	t.Helper()
	var out []expression
	for _, d := range dashboards(t, objs) {
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				out = append(out, expression{where: fmt.Sprintf("dashboard %q panel %q", d.Title, p.Title), expr: grafanaVars.Replace(tg.Expr), dashboard: d.Title})
			}
		}
		for _, v := range d.Templating.List {
			q, ok := v.Query.(map[string]any)
			if !ok {
				continue // the data source variable
			}
			query, _ := q["query"].(string)
			m := labelValuesRE.FindStringSubmatch(query)
			if m == nil {
				t.Errorf("dashboard %q variable %s: query %q is not label_values(selector, label)", d.Title, v.Name, query)
				continue
			}
			out = append(out, expression{where: fmt.Sprintf("dashboard %q variable %s", d.Title, v.Name), expr: m[1], dashboard: d.Title})
		}
	}
	return out
}

// metricNames are the metric names an expression selects; a selector of names by a regex
// ({__name__=~"a|b"}, one per model-server runtime) selects each of its alternatives.
func metricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			name := []string{vs.Name}
			for _, m := range vs.LabelMatchers {
				if m.Name != "__name__" {
					continue
				}
				name = []string{m.Value}
				if m.Type == labels.MatchRegexp {
					name = strings.Split(m.Value, "|")
				}
			}
			names = append(names, name...)
		}
		return nil
	})
	return names
}

// registered says whether a series name belongs to a registered family: a histogram's series
// carry _bucket, _sum and _count.
func registered(families map[string]bool, name string) bool {
	if families[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
			return true
		}
	}
	return false
}

// engineMetrics are the model servers' own gauges the operator knows (controllers/runtimes), by
// what they count: the Router dashboard's model-server panels select these, from the inference
// pods' scrape.
func engineMetrics() (waiting, running, kvCache map[string]bool) {
	waiting, running, kvCache = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, r := range []inferencev1alpha1.Runtime{inferencev1alpha1.RuntimeLlamaCPP, inferencev1alpha1.RuntimeVLLM,
		inferencev1alpha1.RuntimeTGI, inferencev1alpha1.RuntimeSGLang, inferencev1alpha1.RuntimePersonaPlex, inferencev1alpha1.RuntimeGeneric} {
		m, ok := runtimes.EngineMetricsFor(r)
		if !ok {
			continue
		}
		waiting[m.Waiting], running[m.Running] = true, true
		if m.KVCache != "" {
			kvCache[m.KVCache] = true
		}
	}
	return waiting, running, kvCache
}

// Every rule and dashboard expression parses, and every metric it selects is registered: the
// Operator dashboard's by the operator, the Router dashboard's by the router-proxy (its Go runtime
// metrics included) or named by controllers/runtimes as a model server's, an alert's by either
// binary. A renamed metric fails here, not on a dashboard.
func TestRulesAndDashboardsUseRegisteredMetrics(t *testing.T) {
	operator, proxy := operatorMetrics(t), proxyMetrics(t)
	router := map[string]bool{}
	for n := range proxy {
		router[n] = true
	}
	waiting, running, kvCache := engineMetrics()
	for _, m := range []map[string]bool{waiting, running, kvCache} {
		for n := range m {
			router[n] = true
		}
	}
	either := map[string]bool{}
	for _, m := range []map[string]bool{operator, proxy} {
		for n := range m {
			either[n] = true
		}
	}
	familiesOf := map[string]map[string]bool{"": either, "LLMKube / Operator": operator, "LLMKube / Router": router}
	objs := rendered(t)
	exprs := append(ruleExpressions(t, objs), dashboardExpressions(t, objs)...)
	p := parser.NewParser(parser.Options{})
	for _, e := range exprs {
		families, ok := familiesOf[e.dashboard]
		if !ok {
			t.Fatalf("%s: no registry known for dashboard %q", e.where, e.dashboard)
		}
		parsed, err := p.ParseExpr(e.expr)
		if err != nil {
			t.Errorf("%s: %v\n%s", e.where, err, e.expr)
			continue
		}
		names := metricNames(parsed)
		if len(names) == 0 {
			t.Errorf("%s selects no metric: %s", e.where, e.expr)
		}
		for _, n := range names {
			if !registered(families, n) {
				t.Errorf("%s uses %s, which the binary it watches does not register", e.where, n)
			}
		}
	}
	t.Logf("%d expressions checked against %d registered metric families", len(exprs), len(either)+len(router))
}

// Every llmkube_ metric the operator or the proxy registers is in the table of docs/operations.md with the
// labels it has, and every metric of the table is registered.
// Proves F8.
func TestReadmeDocumentsEveryMetric(t *testing.T) {
	own := newDescribing()
	if err := controllers.RegisterMetrics(own, nil); err != nil {
		t.Fatal(err)
	}
	proxy := newDescribing()
	registerProxy(t, proxy)
	all := map[string][]string{}
	for _, d := range []*describing{own, proxy} {
		for n, l := range d.names {
			if strings.HasPrefix(n, "llmkube_") {
				all[n] = l
			}
		}
	}
	doc, err := metricsdoc.ReadRepo(helmtool.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	for n, labels := range all {
		m, ok := doc[n]
		got := m.Labels
		if !ok {
			t.Errorf("%s is registered but not in the metrics table of docs/operations.md", n)
			continue
		}
		a, b := append([]string(nil), labels...), append([]string(nil), got...)
		sort.Strings(a)
		sort.Strings(b)
		if strings.Join(a, ",") != strings.Join(b, ",") {
			t.Errorf("%s: docs/operations.md lists labels %v, the code registers %v", n, got, labels)
		}
	}
	for n := range doc {
		if _, ok := all[n]; !ok {
			t.Errorf("the metrics table of docs/operations.md lists %s, which nothing registers", n)
		}
	}
}
