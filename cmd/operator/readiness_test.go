/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// Readiness follows controller-runtime's own informer cache: ready once its informers synced,
// not while one still waits for its first list (here against an API server that never answers).
// Proves A9.
func TestReadyOnlyOnceTheCacheSynced(t *testing.T) {
	cfg := &rest.Config{Host: "http://127.0.0.1:1"} // nothing listens: a list never succeeds
	// A fixed mapping: discovery would need the server too.
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	c, err := cache.New(cfg, cache.Options{Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	check := cacheSynced(c)
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := check(req); err != nil {
		t.Fatalf("a started cache with no informer is synced, got %v", err)
	}
	if _, err := c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
		t.Fatal(err)
	}
	if err := check(req); err == nil {
		t.Fatal("ready while an informer has not listed its objects")
	}
}
