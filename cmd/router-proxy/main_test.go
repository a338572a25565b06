/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The binary starts serving only with a document it understands: anything else stops it at once
// with a message that says what is wrong, before it listens.
func TestRefusesADocumentItDoesNotUnderstand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "router-proxy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"newer version": {`{"version":"llmkube.dev/routing/v2","backends":[]}`, `routing document version \"llmkube.dev/routing/v2\" is not supported`},
		"unknown field": {`{"version":"llmkube.dev/routing/v1","backends":[],"weights":{}}`, `unknown field \"weights\"`},
		"not JSON":      {`backends: []`, `not valid JSON`},
		"missing file":  {"", `no such file or directory`},
	} {
		cfg := filepath.Join(dir, name+".json")
		if tc.doc != "" {
			if err := os.WriteFile(cfg, []byte(tc.doc), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// A proxy that starts anyway is stopped after 10 s, and fails the case.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, bin, "--config="+cfg, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0").CombinedOutput()
		cancel()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("%s: want exit 1, got %v\n%s", name, err, out)
		}
		if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), `"msg":"serving"`) {
			t.Errorf("%s: output lacks %q or shows serving:\n%s", name, tc.want, out)
		}
	}
}
