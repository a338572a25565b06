/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/docblocks"
)

// docs/routing-document.md describes the document the proxy reads: its example is a document the
// proxy accepts, and every field of the type has a row (a field added to api/routing/v1 without a
// word here fails).
// Proves A10.
func TestRoutingDocumentReferenceMatchesTheType(t *testing.T) {
	page := filepath.Join("..", "..", "..", "docs", "routing-document.md")
	blocks, err := docblocks.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	for _, b := range blocks {
		if b.Info != "json" {
			continue
		}
		examples++
		if _, err := routingv1.Parse([]byte(b.Body)); err != nil {
			t.Errorf("%s: the example is not a document the proxy accepts: %v", b, err)
		}
	}
	if examples == 0 {
		t.Fatal("the page has no JSON example")
	}
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{routingv1.Document{}, routingv1.Backend{}, routingv1.Rule{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(string(text), "| `"+name+"` |") {
				t.Errorf("%s.%s (%q) has no row in docs/routing-document.md", typ.Name(), typ.Field(i).Name, name)
			}
		}
	}
}
