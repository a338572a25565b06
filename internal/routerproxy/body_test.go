/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"encoding/json"
	"testing"
)

func TestScanBody(t *testing.T) {
	for _, tc := range []struct {
		body   string
		model  string
		stream bool
		code   string // error code, "" when accepted
	}{
		{`{"model":"m","messages":[]}`, "m", false, ""},
		{` { "messages" : [{"model":"inner"}], "model" :  "m" , "stream": true } `, "m", true, ""},
		{`{"model":"m","stream":false}`, "m", false, ""},
		{`{"model":"m"`, "", false, "invalid_json"},
		{`{"model":"m"} {}`, "", false, "invalid_json"},
		{`[{"model":"m"}]`, "", false, "invalid_json"},
		{``, "", false, "invalid_json"},
		{`{"messages":[]}`, "", false, "missing_required_parameter"},
		{`{"model":""}`, "", false, "missing_required_parameter"},
		{`{"model":42}`, "", false, "invalid_type"},
		{`{"model":null}`, "", false, "invalid_type"},
		{`{"model":"a","model":"b"}`, "", false, "invalid_value"},
	} {
		rb, e := scanBody([]byte(tc.body))
		if tc.code != "" {
			if e == nil || e.code != tc.code || e.status != 400 {
				t.Errorf("%s: want 400 %s, got %+v", tc.body, tc.code, e)
			}
			continue
		}
		if e != nil || rb.model != tc.model || rb.stream != tc.stream {
			t.Errorf("%s: got %+v %+v", tc.body, rb, e)
		}
	}
}

func TestWithModelChangesOnlyTheModel(t *testing.T) {
	body := []byte(` { "messages" : [{"model":"inner"}], "model" :  "m" , "n": 1.50 } `)
	rb, e := scanBody(body)
	if e != nil {
		t.Fatal(e)
	}
	quoted, _ := json.Marshal("gpt-4o<\"x\">")
	got := string(withModel(body, rb, quoted))
	want := ` { "messages" : [{"model":"inner"}], "model" :  "gpt-4o\u003c\"x\"\u003e" , "n": 1.50 } `
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}
