/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
)

func affinityOf(t *testing.T, b *Balancer, path, body, session string) balance.Request {
	t.Helper()
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	if session != "" {
		r.Header.Set(SessionHeader, session)
	}
	rb, e := scanBody([]byte(body))
	if e != nil {
		t.Fatal(e.code)
	}
	return b.affinity(r, []byte(body), rb)
}

// What PrefixAffinity chooses by: the blocks of the prompt's text (chat messages, a completion
// prompt, a Responses request's instructions and input), the same for any spelling of the same
// JSON; the session header as a key; nothing for other requests.
func TestAffinity(t *testing.T) {
	b := NewBalancer(&routingv1.Document{}, BalancerOptions{PrefixBlockBytes: 16})
	chat := "/v1/chat/completions"
	sys := strings.Repeat("You are terse. ", 8)
	first := affinityOf(t, b, chat, `{"model":"m","messages":[{"role":"system","content":"`+sys+`"},{"role":"user","content":"Q1"}]}`, "")
	later := affinityOf(t, b, chat, `{"model":"m","messages":[{"role":"system","content":"`+sys+`"},{"role":"user","content":"Q1"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]}`, "")
	respelled := affinityOf(t, b, chat, "{ \"messages\" : [ {\"content\":\""+sys+"\",\n \"role\":\"system\"}, {\"content\":\"Q\\u0031\",\"role\":\"user\"} ],\"stream\":false, \"model\":\"m\"}", "")
	if first.HasKey || len(first.Blocks) < 7 {
		t.Fatalf("chat: key %v, %d blocks", first.HasKey, len(first.Blocks))
	}
	if !slices.Equal(later.Blocks[:len(first.Blocks)], first.Blocks) {
		t.Error("a conversation's later turn does not start with its first turn's blocks")
	}
	if !slices.Equal(respelled.Blocks, first.Blocks) {
		t.Error("the same messages with another key order, whitespace and escapes have other blocks")
	}
	if other := affinityOf(t, b, chat, `{"model":"m2","messages":[{"role":"system","content":"`+sys+`"},{"role":"user","content":"Q1"}]}`, ""); other.Blocks[0] == first.Blocks[0] {
		t.Error("another model shares the first block")
	}
	pinned := affinityOf(t, b, chat, `{"model":"m","messages":[{"role":"user","content":"a"}]}`, "sess")
	pinned2 := affinityOf(t, b, chat, `{"model":"x","messages":[{"role":"user","content":"b"}]}`, "sess")
	if !pinned.HasKey || !pinned2.HasKey || pinned.Key != pinned2.Key {
		t.Error("x-session-id does not pin")
	}
	long := strings.Repeat("x", 5000)
	c1 := affinityOf(t, b, "/v1/completions", `{"model":"m","prompt":"`+long+`A"}`, "")
	c2 := affinityOf(t, b, "/v1/completions", `{"model":"m","prompt":"`+long+`BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"}`, "")
	if len(c1.Blocks) != 312 || len(c2.Blocks) != 315 || !slices.Equal(c1.Blocks, c2.Blocks[:312]) {
		t.Errorf("completions: %d and %d blocks", len(c1.Blocks), len(c2.Blocks))
	}
	r1 := affinityOf(t, b, "/v1/responses", `{"model":"m","instructions":"`+sys+`","input":"hello"}`, "")
	r2 := affinityOf(t, b, "/v1/responses", `{"input":[{"role":"user","content":"hello"}],"model":"m","instructions":"`+sys+`"}`, "")
	if len(r1.Blocks) == 0 || !slices.Equal(r1.Blocks, r2.Blocks) {
		t.Errorf("responses: %d blocks, a string input and one user item differ", len(r1.Blocks))
	}
	for _, none := range []struct{ path, body string }{
		{"/v1/embeddings", `{"model":"m","input":"` + long + `"}`},
		{"/v1/completions", `{"model":"m","prompt":[1,2,3]}`},
	} {
		if pr := affinityOf(t, b, none.path, none.body, ""); pr.HasKey || pr.Blocks != nil {
			t.Errorf("%s %s: %+v", none.path, none.body, pr)
		}
	}
}
