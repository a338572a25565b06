/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/llmkube/operator/test/helmtool"
)

// alertTests are promtool's unit-test files (series in, alerts out), each naming rules.yaml: the
// PrometheusRule's spec as the chart renders it with the production values.
const alertTests = "testdata/alerts"

// writeRules writes the rendered PrometheusRule's spec to dir/rules.yaml, the rule file the test
// files load, and returns its groups.
func writeRules(t *testing.T, dir string) []ruleGroup {
	t.Helper()
	u := helmtool.Find(rendered(t), "PrometheusRule", "llmkube")
	if u == nil {
		t.Fatal("no PrometheusRule rendered")
	}
	spec, err := yaml.Marshal(u.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Groups []ruleGroup `json:"groups"`
	}
	if err := yaml.Unmarshal(spec, &rf); err != nil {
		t.Fatal(err)
	}
	return rf.Groups
}

type ruleGroup struct {
	Rules []struct {
		Alert       string            `json:"alert"`
		Annotations map[string]string `json:"annotations"`
	} `json:"rules"`
}

// promtool runs `promtool test rules` on files, built from the pinned module in ./promtool (its
// own module: promtool's dependencies never touch this one's); `go tool` caches the binary.
//
// Note: remove_all_sd is Prometheus' own build tag that leaves out the service-discovery plugins
// (the cloud providers' SDKs), which unit tests of rules never use: it cuts the first build from
// over half an hour on a loaded 2-core machine to about a minute.
func promtool(t *testing.T, files ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "promtool", "test", "rules"}, files...)...)
	cmd.Dir = "promtool"
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -tags=remove_all_sd"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// Every alert fires on the input that names its failure, once per object whatever the number of
// operator or proxy replicas, with the annotations it says: promtool's own unit tests of the
// rendered rules.
// Proves A1, A2, A3, A4, A5.
func TestAlertsFireOnTheirFailures(t *testing.T) {
	dir := t.TempDir()
	writeRules(t, dir)
	tests, err := filepath.Glob(filepath.Join(alertTests, "*.test.yaml"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no test files in %s (%v)", alertTests, err)
	}
	var files []string
	for _, f := range tests {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, dst)
	}
	promtool(t, files...)
}

// Every alert has a summary, a description and a runbook, and a promtool test that expects it to
// fire: an alert nobody saw fire is one nobody knows fires.
// Proves A5.
func TestEveryAlertIsAnnotatedAndTested(t *testing.T) {
	groups := writeRules(t, t.TempDir())
	var tested strings.Builder
	files, _ := filepath.Glob(filepath.Join(alertTests, "*.test.yaml"))
	for _, f := range files {
		var tf struct {
			Tests []struct {
				AlertRuleTest []struct {
					Alertname string `json:"alertname"`
					ExpAlerts []any  `json:"exp_alerts"`
				} `json:"alert_rule_test"`
			} `json:"tests"`
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &tf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range tf.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					tested.WriteString(" " + a.Alertname + " ")
				}
			}
		}
	}
	n := 0
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			for _, k := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[k]) == "" {
					t.Errorf("alert %s has no %s", r.Alert, k)
				}
			}
			if !strings.Contains(tested.String(), " "+r.Alert+" ") {
				t.Errorf("alert %s: no test in %s expects it to fire", r.Alert, alertTests)
			}
		}
	}
	t.Logf("%d alerts", n)
}
