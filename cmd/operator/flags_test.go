/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// The help text names every flag's argument by its type: a backquoted word in a usage string
// would become the argument's name (`-pprof-bind-address make bench`).
// Proves A6.
func TestHelpShowsEveryFlagWithItsType(t *testing.T) {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	bindFlags(fs, &options{}, true)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.Usage, "`") {
			name, _ := flag.UnquoteUsage(f)
			t.Errorf("-%s %s: a backquote in its usage names its argument %q", f.Name, name, name)
		}
	})
}

// A release build (no embedded control plane linked) offers none of its flags.
// Proves A6.
func TestReleaseBuildOffersNoDevClusterFlags(t *testing.T) {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	bindFlags(fs, &options{}, false)
	for _, name := range []string{"dev-control-plane", "apply-samples", "dev-dir"} {
		if fs.Lookup(name) != nil {
			t.Errorf("the release build offers -%s, which it cannot honour", name)
		}
	}
	full := flag.NewFlagSet("operator", flag.ContinueOnError)
	bindFlags(full, &options{}, true)
	if full.Lookup("dev-control-plane") == nil {
		t.Error("a build with the embedded control plane lost -dev-control-plane")
	}
}

// Without flags the operator logs as production wants it: one JSON object per line, no stack
// trace on a warning, and a DPanic logs instead of ending the process.
// Proves A6.
func TestLogsDefaultToProductionJSON(t *testing.T) {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts := bindFlags(fs, &options{}, true)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	opts.DestWriter = &buf
	raw := zap.NewRaw(zap.UseFlagOptions(opts))
	raw.Warn("a warning")
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("DPanic panicked: %v (zap's development mode)", r)
			}
		}()
		raw.DPanic("a DPanic")
	}()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(l), &entry); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", l, err)
		}
		if entry["level"] == "WARN" {
			if _, ok := entry["stacktrace"]; ok {
				t.Errorf("a warning carries a stack trace: %q", l)
			}
		}
	}

	// The router-proxy's logger (log/slog's JSON handler): the same keys and level names.
	var proxy bytes.Buffer
	slog.New(slog.NewJSONHandler(&proxy, nil)).Warn("a warning")
	var want, got map[string]any
	if err := json.Unmarshal(proxy.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{slog.TimeKey, slog.LevelKey, slog.MessageKey} {
		if _, ok := got[k]; !ok || got[slog.LevelKey] != want[slog.LevelKey] {
			t.Errorf("the operator logs %v, the router-proxy %v: key %q or the level's name differs", got, want, k)
		}
	}

	console := flag.NewFlagSet("operator", flag.ContinueOnError)
	copts := bindFlags(console, &options{}, true)
	if err := console.Parse([]string{"--zap-encoder=console"}); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	copts.DestWriter = &buf
	zap.NewRaw(zap.UseFlagOptions(copts)).Info("hello")
	if json.Valid(bytes.TrimSpace(buf.Bytes())) {
		t.Errorf("--zap-encoder=console still logs JSON: %s", buf.String())
	}
}
