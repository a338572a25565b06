/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"encoding/json"
	"testing"
)

// FuzzScanBody: any body either gets a 400 or yields the model encoding/json reads from it, and
// rewriting the model changes that value and nothing else.
func FuzzScanBody(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	f.Add([]byte(` { "a" : [1,{"model":"x"}], "model" :"\u00e9\"" } `))
	f.Add([]byte(`{"model":"a","model":"b"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rb, e := scanBody(body)
		if e != nil {
			if e.status != 400 {
				t.Fatalf("status %d", e.status)
			}
			return
		}
		var std map[string]json.RawMessage
		if err := json.Unmarshal(body, &std); err != nil {
			t.Fatalf("accepted a body encoding/json refuses: %v", err)
		}
		var model string
		if err := json.Unmarshal(body[rb.modelStart:rb.modelEnd], &model); err != nil || model != rb.model {
			t.Fatalf("model span %q does not hold %q", body[rb.modelStart:rb.modelEnd], rb.model)
		}
		out := withModel(body, rb, []byte(`"rewritten"`))
		again, e := scanBody(out)
		if e != nil || again.model != "rewritten" || again.stream != rb.stream {
			t.Fatalf("rewrite broke the body: %s (%+v)", out, e)
		}
		if string(out[:rb.modelStart]) != string(body[:rb.modelStart]) || string(out[again.modelEnd:]) != string(body[rb.modelEnd:]) {
			t.Fatalf("rewrite changed more than the model: %s", out)
		}
	})
}
