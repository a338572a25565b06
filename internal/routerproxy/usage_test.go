/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"strings"
	"testing"
)

// Proves R21.
func TestUsageEditAsksForUsageOnlyWhenTheClientDidNot(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","stream":true}`, `{"stream_options":{"include_usage":true},"model":"x","stream":true}`},
		{`{"model":"m","stream":true,"stream_options":{}}`, `{"model":"x","stream":true,"stream_options":{"include_usage":true}}`},
		{`{"model":"m","stream_options":{ "include_obfuscation":false },"stream":true}`, `{"model":"x","stream_options":{"include_usage":true, "include_obfuscation":false },"stream":true}`},
		{`{"stream_options":{"include_usage":false},"model":"m","stream":true}`, `{"stream_options":{"include_usage":false},"model":"x","stream":true}`},
		{`{"stream_options":{"include_obfuscation":true, "include_usage" : false},"model":"m","stream":true}`, `{"stream_options":{"include_obfuscation":true, "include_usage" : false},"model":"x","stream":true}`},
		{`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, `{"model":"x","stream":true,"stream_options":{"include_usage":true}}`},
	} {
		rb, e := scanBody([]byte(tc.body))
		if e != nil {
			t.Fatal(e)
		}
		got := string(bytes.Join(bodyParts([]byte(tc.body), rb, []byte(`"x"`), true), nil))
		if got != tc.want || !json.Valid([]byte(got)) {
			t.Errorf("%s:\n got %s\nwant %s", tc.body, got, tc.want)
		}
	}
}

func TestScanFormFindsTheModelFieldAndKeepsTheFile(t *testing.T) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "a.wav")
	file := []byte("RIFF\x00\x01\r\n--not-a-boundary\r\n\xff")
	_, _ = fw.Write(file)
	_ = mw.WriteField("model", "whisper-1")
	_ = mw.WriteField("stream", "true")
	_ = mw.Close()
	body := buf.Bytes()
	rb, e := scanForm(body, mw.FormDataContentType())
	if e != nil || rb.model != "whisper-1" || !rb.stream {
		t.Fatalf("got %+v %+v", rb, e)
	}
	out := bytes.Join(bodyParts(body, rb, []byte("large-v3"), true), nil)
	r := multipart.NewReader(bytes.NewReader(out), mw.Boundary())
	form, err := r.ReadForm(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if got := form.Value["model"]; len(got) != 1 || got[0] != "large-v3" {
		t.Fatalf("model %v", got)
	}
	f, _ := form.File["file"][0].Open()
	var got bytes.Buffer
	_, _ = got.ReadFrom(f)
	if !bytes.Equal(got.Bytes(), file) {
		t.Fatalf("file part changed: %q", got.Bytes())
	}

	for _, bad := range []string{"", "text/plain", "multipart/form-data"} {
		if _, e := scanForm(body, bad); e == nil || e.status != 400 {
			t.Errorf("content type %q: got %+v", bad, e)
		}
	}
	if _, e := scanForm([]byte("--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--b--\r\n"), "multipart/form-data; boundary=b"); e == nil || e.code != "missing_required_parameter" {
		t.Errorf("no model: got %+v", e)
	}
}

// meterRun passes chunks through a meter and returns what the client got.
func meterRun(m *meter, chunks ...string) string {
	var out strings.Builder
	emit := func(b []byte) error { out.Write(b); return nil }
	for _, c := range chunks {
		_ = m.write([]byte(c), emit)
	}
	_ = m.flush(emit)
	return out.String()
}

func TestMeterReadsUsage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		in     int64
		out    int64
	}{
		{"chat", []string{`{"choices":[{"message":{"content":"\"usage\": {\"prompt_tokens\":9}"}}],"us`, `age" : {"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`}, 5, 7},
		{"responses", []string{`{"usage":null,"output":[],"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":4}}`}, 3, 4},
		{"embeddings", []string{`{"data":[],"usage":{"prompt_tokens":2,"total_tokens":2}}`}, 2, 0},
	} {
		m := &meter{}
		got := meterRun(m, tc.chunks...)
		if got != strings.Join(tc.chunks, "") || !m.usage.ok || m.usage.input != tc.in || m.usage.output != tc.out {
			t.Errorf("%s: %+v, passed %q", tc.name, m.usage, got)
		}
	}
	m := &meter{}
	meterRun(m, `{"usage":{"prompt_tokens":"x"}}`)
	if m.usage.ok {
		t.Errorf("a malformed usage counted: %+v", m.usage)
	}
}

// Proves R21.
func TestMeterHidesTheUsageChunkItAskedFor(t *testing.T) {
	first := `data: {"choices":[{"delta":{"role":"assistant","content":""}}],"usage":null}` + "\n\n"
	second := `data: {"choices":[{"delta":{"content":"Hi"}}],"usage":null}` + "\n\n"
	usageChunk := `data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}` + "\n\n"
	done := "data: [DONE]\n\n"
	stream := first + second + usageChunk + done

	m := &meter{stream: true, hide: true}
	got := meterRun(m, stream[:10], stream[10:len(first)+5], stream[len(first)+5:len(stream)-3], stream[len(stream)-3:])
	if got != first+second+done {
		t.Errorf("client got %q", got)
	}
	if m.usage != (usage{input: 4, output: 2, ok: true}) || m.firstToken.IsZero() {
		t.Errorf("usage %+v, first token %v", m.usage, m.firstToken)
	}

	m = &meter{stream: true}
	if got := meterRun(m, stream); got != stream || m.usage.output != 2 {
		t.Errorf("a client that asked for usage: %q %+v", got, m.usage)
	}
	m = &meter{stream: true}
	if meterRun(m, first); !m.firstToken.IsZero() {
		t.Error("an empty content is not a token")
	}
}
