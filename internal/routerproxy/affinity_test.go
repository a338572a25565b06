/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func key(t *testing.T, path, body string, session string) (uint64, bool) {
	t.Helper()
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	if session != "" {
		r.Header.Set(SessionHeader, session)
	}
	rb, e := scanBody([]byte(body))
	if e != nil {
		t.Fatal(e.code)
	}
	return affinityKey(r, []byte(body), rb)
}

// What docs/router.md says is hashed: the leading messages through the first user message, the
// model, a completion prompt's start, or the session header; nothing for other requests.
func TestAffinityKey(t *testing.T) {
	chat := "/v1/chat/completions"
	first, _ := key(t, chat, `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]}`, "")
	later, _ := key(t, chat, `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"},{"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]}`, "")
	if first != later {
		t.Error("a conversation's later turn has another key than its first")
	}
	for _, other := range []string{
		`{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"other"}]}`,
		`{"model":"m2","messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]}`,
		`{"model":"m","messages":[{"role":"system","content":"T"},{"role":"user","content":"Q1"}]}`,
	} {
		if k, _ := key(t, chat, other, ""); k == first {
			t.Errorf("same key for %s", other)
		}
	}
	s1, ok1 := key(t, chat, `{"model":"m","messages":[{"role":"user","content":"a"}]}`, "sess")
	s2, ok2 := key(t, chat, `{"model":"x","messages":[{"role":"user","content":"b"}]}`, "sess")
	if !ok1 || !ok2 || s1 != s2 {
		t.Error("x-session-id does not pin")
	}
	long := strings.Repeat("x", 5000)
	c1, ok := key(t, "/v1/completions", `{"model":"m","prompt":"`+long+`A"}`, "")
	c2, _ := key(t, "/v1/completions", `{"model":"m","prompt":"`+long+`B"}`, "")
	if !ok || c1 != c2 {
		t.Error("completion prompts agreeing on their first 4096 bytes have different keys")
	}
	if _, ok := key(t, "/v1/embeddings", `{"model":"m","input":"hello"}`, ""); ok {
		t.Error("embeddings have no key")
	}
	if _, ok := key(t, "/v1/completions", `{"model":"m","prompt":[1,2,3]}`, ""); ok {
		t.Error("token-array prompts have no key")
	}
}
