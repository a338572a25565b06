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

// The scans' CPU per byte, forms against JSON bodies of the same size (8 MiB):
//
//	go test ./internal/routerproxy -run '^$' -bench 'Scan(Form|Body)' -benchtime 20x
const benchSize = 8 << 20

func benchForm(file []byte) []byte {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.SetBoundary("b0undary")
	fw, _ := mw.CreateFormFile("file", "a.wav")
	_, _ = fw.Write(file)
	_ = mw.WriteField("model", "whisper-1")
	_ = mw.Close()
	return buf.Bytes()
}

// hostileForms are bodies built to cost the most per byte.
func hostileForms() map[string][]byte {
	many := &bytes.Buffer{}
	for many.Len() < benchSize {
		many.WriteString("--b0undary\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n" + strings.Repeat("y", 8000) + "\r\n")
	}
	many.WriteString("--b0undary\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--b0undary--\r\n")
	return map[string][]byte{
		"audio":           benchForm(bytes.Repeat([]byte("RIFF\x00\x01\x02\x03abcdefgh"), benchSize/16)),
		"near-delimiters": benchForm(bytes.Repeat([]byte("\r\n--b0undarX"), benchSize/12)),
		"line-ends":       benchForm(bytes.Repeat([]byte("\r\n"), benchSize/2)),
		"preamble-lines":  append(bytes.Repeat([]byte("\n"), benchSize), benchForm(nil)...),
		"parts-of-8KB":    many.Bytes(),
	}
}

func BenchmarkScanForm(b *testing.B) {
	for name, body := range hostileForms() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = scanForm(body, "multipart/form-data; boundary=b0undary")
			}
		})
	}
}

func BenchmarkScanBody(b *testing.B) {
	text, _ := json.Marshal(strings.Repeat("The quick brown fox jumps over the lazy dog. ", benchSize/45))
	escaped, _ := json.Marshal(strings.Repeat("\"\\\u00e9\n", benchSize/12))
	numbers := "[" + strings.Repeat("1,", benchSize/2) + "1]"
	for name, v := range map[string]string{"prompt": string(text), "escapes": string(escaped), "numbers": numbers} {
		body := []byte(`{"model":"m","messages":[{"role":"user","content":` + v + `}]}`)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = scanBody(body)
			}
		})
	}
}
