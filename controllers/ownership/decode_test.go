/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDecodeAppliesOnce: controller-runtime's applies through a configuration it wrapped ask for
// fieldValidation=Ignore, the status subresource's too; a merge patch and a request that names
// its own field validation are sent as they were.
func TestDecodeAppliesOnce(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Content-Type")+" "+r.URL.Path] = r.URL.Query().Get("fieldValidation")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"m","namespace":"ns"}}`))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	DecodeAppliesOnce(cfg)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Service"), meta.RESTScopeNamespace)
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Apply(ctx, corev1ac.Service("m", "ns"), client.FieldOwner("o"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Apply(ctx, corev1ac.Service("s", "ns"), client.FieldOwner("o"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	if err := c.Patch(ctx, svc, client.RawPatch("application/merge-patch+json", []byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	strict := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "strict", Namespace: "ns"}}
	if err := c.Patch(ctx, strict, client.RawPatch("application/apply-patch+yaml", []byte(`{}`)),
		client.FieldOwner("o"), client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"application/apply-patch+yaml /api/v1/namespaces/ns/services/m":        "Ignore",
		"application/apply-patch+yaml /api/v1/namespaces/ns/services/s/status": "Ignore",
		"application/merge-patch+json /api/v1/namespaces/ns/services/p":        "",
		"application/apply-patch+yaml /api/v1/namespaces/ns/services/strict":   "Strict",
	}
	for req, v := range want {
		if got, ok := seen[req]; !ok || got != v {
			t.Errorf("%s: fieldValidation=%q (sent: %v), want %q", req, got, ok, v)
		}
	}
}
