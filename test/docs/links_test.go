/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*$`)
	// GitHub drops from a heading's anchor everything but letters, digits, spaces, - and _.
	notAnchor = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	fence     = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
)

// anchors are the heading anchors GitHub makes for a Markdown file.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(data), ""), -1) {
		a := strings.ReplaceAll(notAnchor.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		out[a] = true
	}
	return out
}

// Every relative link of the README and docs/ lands on a file, and every #anchor on a heading of
// it; so do the links the chart prints and the runbook URLs of its alerts.
func TestLinksLand(t *testing.T) {
	check := func(from, target string) {
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			return
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := from
		if file != "" {
			path = filepath.Join(filepath.Dir(from), filepath.FromSlash(file))
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: link %s: no such file", from, target)
			return
		}
		if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
			t.Errorf("%s: link %s: %s has no heading with anchor #%s", from, target, path, anchor)
		}
	}
	for _, page := range pages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(string(data), ""), -1) {
			check(page, m[1])
		}
	}

	// The chart: runbook_url is runbookBaseURL + "#" + an anchor per alert, and NOTES.txt links the
	// README; both point at files of this repository on GitHub.
	const github = "https://github.com/llmkube/operator/blob/"
	values, err := os.ReadFile(filepath.Join(root, "charts/llmkube/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := regexp.MustCompile(`runbookBaseURL:\s*(\S+)`).FindStringSubmatch(string(values))
	if base == nil || !strings.HasPrefix(base[1], github) {
		t.Fatalf("values.yaml: no runbookBaseURL into %s", github)
	}
	_, runbooks, _ := strings.Cut(strings.TrimPrefix(base[1], github), "/")
	rules, err := os.ReadFile(filepath.Join(root, "charts/llmkube/files/prometheus-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	urls := regexp.MustCompile(`runbook_url:.*runbookBaseURL\s*}}#(\S+)`).FindAllStringSubmatch(string(rules), -1)
	if len(urls) == 0 {
		t.Fatal("prometheus-rules.yaml: no runbook_url found")
	}
	for _, m := range urls {
		check(filepath.Join(root, "charts/llmkube/values.yaml"), filepath.Join("..", "..", runbooks)+"#"+m[1])
	}
	notes, err := os.ReadFile(filepath.Join(root, "charts/llmkube/templates/NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The ref must exist for every copy of the chart: no release has been tagged, so a tag built
	// from the chart's version (v{{ .Chart.AppVersion }}) points nowhere; main always exists.
	for _, m := range regexp.MustCompile(regexp.QuoteMeta(github)+`([^/\n]+)/(\S+)`).FindAllStringSubmatch(string(notes), -1) {
		if m[1] != "main" {
			t.Errorf("charts/llmkube/templates/NOTES.txt links %s at ref %q, which the repository may not have: link main", m[2], m[1])
		}
		check(filepath.Join(root, "charts/llmkube/templates/NOTES.txt"), filepath.Join("..", "..", "..", m[2]))
	}
}
