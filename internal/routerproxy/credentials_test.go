/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Proves R32: a backend's mounted credentials Secret is reread, so a rotated key is sent
// without a restart; a failed reread keeps the key the backend had.
func TestCredentialsRotation(t *testing.T) {
	cloud := newUpstream(t, "cloud")
	dir := t.TempDir()
	write := func(key string) {
		if err := os.MkdirAll(filepath.Join(dir, "cloud"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cloud", "API_KEY"), []byte(key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("sk-old")
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "cloud", Kind: routingv1.KindExternal, URL: cloud.URL + "/v1", Provider: "openai", Credentials: true}},
		DefaultRoute: "cloud",
	}, func(o *Options) { o.CredentialsDir, o.CredentialsRefresh = dir, 20*time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)
	key := func() string {
		do(p, "POST", "/v1/chat/completions", `{"model":"m"}`, nil)
		return cloud.last.Load().Header.Get("Authorization")
	}
	if got := key(); got != "Bearer sk-old" {
		t.Fatalf("at start: %q", got)
	}
	write("sk-new")
	deadline := time.Now().Add(5 * time.Second)
	for key() != "Bearer sk-new" {
		if time.Now().After(deadline) {
			t.Fatal("the rotated key was not sent within 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A directory the proxy cannot read (here: a file where the directory was) keeps the key.
	// The directory leaves in one rename: removing its file first would show, for a reread in
	// between, a directory without API_KEY (a key really removed), which the kubelet's atomic
	// writer never shows.
	if err := os.Rename(filepath.Join(dir, "cloud"), filepath.Join(t.TempDir(), "cloud")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cloud"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if got := key(); got != "Bearer sk-new" {
		t.Fatalf("after a failed reread: %q", got)
	}
}

// Proves R32: a backend's credentials directory that is gone is a failed reread, not a removed
// key (the kubelet never removes it), so the key the backend had keeps being sent.
func TestCredentialsDirectoryGoneKeepsTheKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cloud"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cloud", "API_KEY"), []byte("sk-old"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "cloud", Kind: routingv1.KindExternal, URL: "http://127.0.0.1:1/v1", Provider: "openai", Credentials: true}},
		DefaultRoute: "cloud",
	}, func(o *Options) { o.CredentialsDir, o.CredentialsRefresh = dir, time.Hour })
	if err := os.RemoveAll(filepath.Join(dir, "cloud")); err != nil {
		t.Fatal(err)
	}
	b := p.routes.Load().backends["cloud"]
	p.refreshCredentials(b)
	if got := b.creds.Load().value; got != "Bearer sk-old" {
		t.Fatalf("after the directory went away: %q, want the previous key", got)
	}
}
