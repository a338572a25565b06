/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/operator/test/helmtool"
)

// nodeSDKThroughRouter runs test/node/js/chat.mjs: the official OpenAI Node SDK (pinned in its
// package-lock.json, installed by `make test-node` with npm ci) asks the router's Service, through
// `kubectl port-forward`, for an answer and a stream.
func (s *suite) nodeSDKThroughRouter(t *testing.T) {
	dir := filepath.Join(helmtool.RepoRoot(), "test", "node", "js")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Fatalf("the OpenAI Node SDK is not installed (`make test-node` runs npm ci in test/node/js): %v", err)
	}
	port, stop := s.portForward(t, "default", "svc/router-router-proxy", "8080")
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "chat.mjs", "http://127.0.0.1:"+port+"/v1", "tinyllama")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node chat.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Answer, Streamed string
		Chunks           int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node chat.mjs printed %q: %v", out, err)
	}
	t.Logf("Node SDK: answer %q, stream of %d chunks", got.Answer, got.Chunks)
	if !strings.Contains(got.Answer, "simulator") || got.Streamed != got.Answer || got.Chunks < 3 {
		t.Fatalf("the Node SDK got %q and a stream of %q in %d chunks", got.Answer, got.Streamed, got.Chunks)
	}
}
