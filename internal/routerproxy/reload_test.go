/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Proves R30: a deleted, unreadable or empty routing document is logged once per change of
// state, counted, and reads as an unsuccessful reload until a good one is read; the previous
// document keeps serving throughout.
func TestDocumentWatcherUnreadable(t *testing.T) {
	doc := routingv1.Document{Backends: []routingv1.Backend{{Name: "a", Kind: routingv1.KindExternal, URL: "http://127.0.0.1:1/v1"}}, DefaultRoute: "a"}
	p, reg := newProxy(t, doc, nil)
	data, _ := routingv1.Marshal(doc)
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	w := NewDocumentWatcher(path, data, 0, p, reg, slog.New(slog.NewJSONHandler(&logs, nil)))
	unreadable := func() float64 { return testutil.ToFloat64(w.reloads.WithLabelValues("unreadable")) }
	lines := func(msg string) int { return strings.Count(logs.String(), `"msg":"`+msg+`"`) }

	for _, step := range []struct {
		name      string
		change    func()
		count     float64
		ok        float64
		logged    int
		recovered int
	}{
		{"deleted", func() { _ = os.Remove(path) }, 1, 0, 1, 0},
		{"still deleted: no new line, no new count", func() {}, 1, 0, 1, 0},
		{"back, the same document", func() { _ = os.WriteFile(path, data, 0o600) }, 1, 1, 1, 1},
		{"emptied", func() { _ = os.WriteFile(path, nil, 0o600) }, 2, 0, 2, 1},
		{"a directory in its place (unreadable)", func() { _ = os.Remove(path); _ = os.Mkdir(path, 0o700) }, 3, 0, 3, 1},
		{"a good document again", func() { _ = os.Remove(path); _ = os.WriteFile(path, data, 0o600) }, 3, 1, 3, 2},
	} {
		step.change()
		w.check()
		w.check()
		if got := unreadable(); got != step.count {
			t.Errorf("%s: unreadable count %v, want %v", step.name, got, step.count)
		}
		if got := testutil.ToFloat64(w.current); got != step.ok {
			t.Errorf("%s: last_reload_successful %v, want %v", step.name, got, step.ok)
		}
		if got := lines("routing document unreadable; the previous one keeps serving"); got != step.logged {
			t.Errorf("%s: %d unreadable log lines, want %d", step.name, got, step.logged)
		}
		if got := lines("routing document readable again"); got != step.recovered {
			t.Errorf("%s: %d readable-again log lines, want %d", step.name, got, step.recovered)
		}
		if p.Document().DefaultRoute != "a" {
			t.Fatalf("%s: the served document changed", step.name)
		}
	}
}
