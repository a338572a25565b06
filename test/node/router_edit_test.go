/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/llmkube/operator/test/helmtool"
)

// routerEdit: a stream to tinyllama runs through the router while the ModelRouter gains a backend
// and a rule for it. The operator writes the new routing document into the ConfigMap, the kubelet
// projects it into the running proxy pod, and the proxy serves the new route (a request for
// `second` is answered by the second simulator, where before the edit the default route sent it
// to tinyllama) while the stream opened before the edit runs on and ends whole. No proxy pod was
// replaced or restarted, and the router's Deployment did not roll.
func (s *suite) routerEdit(t *testing.T) {
	dir := filepath.Join(helmtool.RepoRoot(), "test", "node", "testdata", "router-edit")
	s.kubectl("apply", "--server-side", "-f", filepath.Join(dir, "second.yaml"))
	s.kubectl("wait", "--for=condition=Ready", "isvc/second", "--timeout=120s")
	pods := s.routerPods(t)
	generation := s.kubectl("get", "deploy", "router-router-proxy", "-o", "jsonpath={.metadata.generation}")

	c, stop := s.routerClient(t)
	defer stop()
	if got, err := firstWord(c, "second"); err != nil || got != "The" {
		t.Fatalf("before the edit, a request for second is answered %q (%v), want tinyllama's first word (the default route)", got, err)
	}
	reply := slowReply(t)
	done := openStream(t, c, "tinyllama", int64(len(reply)))
	edited := time.Now()
	s.kubectl("apply", "--server-side", "-f", filepath.Join(dir, "modelrouter.yaml"))
	var routed time.Time
	s.eventually(t, 90*time.Second, func() error {
		if now := s.routerPods(t); now != pods {
			t.Fatalf("the router's pods changed (uid restarts) after the edit: %s, then %s", pods, now)
		}
		if got, err := firstWord(c, "second"); err != nil || got != "Second:" {
			return fmt.Errorf("a request for second is answered %q (%v), not by the second simulator", got, err)
		}
		routed = time.Now()
		return nil
	})
	t.Logf("the new route served %s after the edit", routed.Sub(edited).Round(time.Millisecond))

	var r streamed
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the stream opened before the edit did not end within two minutes")
	}
	if !r.ended.After(routed) {
		t.Fatalf("the stream ended %s before the new route served: it did not run across the reload", routed.Sub(r.ended))
	}
	if want := strings.Join(reply, " "); r.err != nil || r.chunks != len(reply) || r.content != want {
		t.Fatalf("the stream opened before the edit ended with %v after %d of %d chunks: %q", r.err, r.chunks, len(reply), r.content)
	}
	t.Logf("the stream opened before the edit ended whole (%d chunks) %s after the new route served", r.chunks, r.ended.Sub(routed).Round(time.Millisecond))
	if now := s.routerPods(t); now != pods {
		t.Fatalf("the router's pods changed (uid restarts): %s, then %s", pods, now)
	}
	if now := s.kubectl("get", "deploy", "router-router-proxy", "-o", "jsonpath={.metadata.generation}"); now != generation {
		t.Fatalf("the router's Deployment moved from generation %s to %s", generation, now)
	}
}

// routerPods is each router-proxy pod's UID and restart count.
func (s *suite) routerPods(t *testing.T) string {
	out := s.kubectl("get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.uid} {.status.containerStatuses[0].restartCount}{"\n"}{end}`)
	var pods []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "router-router-proxy-") {
			pods = append(pods, line)
		}
	}
	if len(pods) == 0 {
		t.Fatalf("no router-proxy pod:\n%s", out)
	}
	return strings.Join(pods, "; ")
}

// firstWord is the first token of the answer to a one-token request for model, through the router.
func firstWord(c openai.Client, model string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	answer, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:     model,
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("One word, please.")},
		MaxTokens: openai.Int(1),
	})
	if err != nil {
		return "", err
	}
	return answer.Choices[0].Message.Content, nil
}
