/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package chart_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/llmkube/operator/test/helmtool"
)

// [I52] The chart's default resources are the row of docs/install.md's sizing table that says it
// is the defaults: a request below what the default limit is sized for lets the node overcommit
// the operator's memory.
func TestDefaultResourcesAreTheSizingTablesRow(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(helmtool.RepoRoot(), "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "|") && strings.Contains(line, "(the chart's defaults)") {
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				row = append(row, strings.TrimSpace(c))
			}
		}
	}
	if len(row) != 5 {
		t.Fatalf("docs/install.md's sizing table has no row marked (the chart's defaults): %v", row)
	}
	c := as[appsv1.Deployment](t, helmtool.Find(render(t), "Deployment", "llmkube")).Spec.Template.Spec.Containers[0]
	limit := c.Resources.Limits.Memory().String()
	request := c.Resources.Requests.Cpu().String() + " / " + c.Resources.Requests.Memory().String()
	if limit != row[3] || request != row[4] {
		t.Errorf("the chart's defaults are limit %s, requests %s; docs/install.md's row says %s and %s", limit, request, row[3], row[4])
	}
}
