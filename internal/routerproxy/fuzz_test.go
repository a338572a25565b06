/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http/httptest"
	"testing"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// fuzzBalancer has small blocks so that fuzzed prompts fill some.
var fuzzBalancer = NewBalancer(&routingv1.Document{}, BalancerOptions{PrefixBlockBytes: 4, PrefixMaxBlocks: 16})

// FuzzScanBody: any body either gets a 400 or yields the model encoding/json reads from it,
// rewriting the model changes that value and nothing else, and its prompt's blocks are computed
// without a panic.
func FuzzScanBody(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	f.Add([]byte(` { "a" : [1,{"model":"x"}], "model" :"\u00e9\"" } `))
	f.Add([]byte(`{"model":"a","model":"b"}`))
	f.Add([]byte(`{"model":"m","instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":"hi \u00e9"}]},{"type":"function_call_output","output":"x"}],"prompt":"once upon a time"}`))
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
		// The prompt's blocks, from the spans the scan found, for every path that has them: any
		// accepted body, never a panic, never more than the cap.
		for _, path := range []string{"/v1/chat/completions", "/v1/completions", "/v1/responses"} {
			r := httptest.NewRequest("POST", path, nil)
			if pr := fuzzBalancer.affinity(r, body, rb); len(pr.Blocks) > fuzzBalancer.hasher.MaxBlocks {
				t.Fatalf("%s: %d blocks, cap %d", path, len(pr.Blocks), fuzzBalancer.hasher.MaxBlocks)
			}
		}
		if rb.usageEdit == nil {
			return
		}
		asked := bytes.Join(bodyParts(body, rb, []byte(`"rewritten"`), true), nil)
		// Maps, not structs: encoding/json matches struct fields case-insensitively.
		var req map[string]json.RawMessage
		var opts map[string]json.RawMessage
		err := json.Unmarshal(asked, &req)
		if err == nil {
			err = json.Unmarshal(req["stream_options"], &opts)
		}
		if err != nil || string(req["model"]) != `"rewritten"` || string(opts["include_usage"]) != "true" {
			t.Fatalf("asking for usage broke the body: %s (%v)", asked, err)
		}
	})
}

// FuzzScanForm is differential against mime/multipart: a body the proxy accepts is one a Go
// backend accepts, with the model the proxy routes on; a body a Go backend reads one model from
// is accepted (unless quoted-printable); and the rewritten body gives a Go backend the new model
// with every other byte unchanged. Proves R31.
func FuzzScanForm(f *testing.F) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.SetBoundary("b0undary")
	fw, _ := mw.CreateFormFile("file", "a.wav")
	_, _ = fw.Write([]byte("RIFF\r\n--b0undar\r\n--b0undaryX\r\n"))
	_ = mw.WriteField("model", "whisper-1")
	_ = mw.WriteField("stream", "true")
	_ = mw.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("--b0undary\r\n\r\nx\r\n--b0undary--"))
	f.Add([]byte("pre --b0undary\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--b0undary\r\n\r\nj\r\n--b0undary \r\nContent-Disposition: form-data; name=model\r\n\r\nn\r\n--b0undary--\r\n"))
	f.Add([]byte("--b0undary\nContent-Disposition: form-data; name=\"model\"\n\nlf\n--b0undary--\n"))
	const ct = "multipart/form-data; boundary=b0undary"
	f.Fuzz(func(t *testing.T, body []byte) {
		form, qp, goErr := goForm(body, "b0undary")
		goModels := 0
		if goErr == nil {
			goModels = len(form.Value["model"]) + len(form.File["model"])
		}
		rb, e := scanForm(body, ct)
		if e != nil {
			if e.status != 400 {
				t.Fatalf("status %d", e.status)
			}
			if goErr == nil && !qp && goModels == 1 && len(form.Value["model"]) == 1 && form.Value["model"][0] != "" {
				t.Fatalf("refused (%s) a body a Go backend reads model %q from", e.message, form.Value["model"][0])
			}
			return
		}
		if goErr != nil {
			t.Fatalf("accepted a body mime/multipart refuses: %v", goErr)
		}
		if goModels != 1 || form.Value["model"][0] != rb.model || string(body[rb.modelStart:rb.modelEnd]) != rb.model {
			t.Fatalf("routed on %q at %d:%d; a Go backend reads %q", rb.model, rb.modelStart, rb.modelEnd, form.Value["model"])
		}
		if len(form.Value["stream"]) > 0 && rb.stream != (form.Value["stream"][0] == "true") {
			t.Fatalf("stream %v; a Go backend reads %q", rb.stream, form.Value["stream"])
		}
		out := bytes.Join(bodyParts(body, rb, []byte("rewritten"), true), nil)
		if again, e := scanForm(out, ct); e != nil || again.model != "rewritten" {
			t.Fatalf("rewrite broke the form: %q (%+v)", out, e)
		}
		if m, err := goFormModel(out, "b0undary"); err != nil || m != "rewritten" {
			t.Fatalf("a Go backend reads %q (%v) from the rewritten body %q", m, err, out)
		}
		if string(out[:rb.modelStart]) != string(body[:rb.modelStart]) || string(out[rb.modelStart+len("rewritten"):]) != string(body[rb.modelEnd:]) {
			t.Fatalf("rewrite changed more than the model: %q", out)
		}
	})
}
