/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"fmt"
	"strings"
	"testing"
)

// The meter's cost against passing the same bytes untouched (the baseline of the same run):
// go test ./internal/routerproxy -run '^$' -bench Meter -benchmem
func benchmarkChunks(b *testing.B, chunks [][]byte, m func() *meter) {
	var n int64
	for _, c := range chunks {
		n += int64(len(c))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	emit := func([]byte) error { return nil }
	for b.Loop() {
		if m == nil {
			for _, c := range chunks {
				_ = emit(c)
			}
			continue
		}
		mm := m()
		for _, c := range chunks {
			_ = mm.write(c, emit)
		}
		_ = mm.flush(emit)
	}
}

// answer is a 1 MiB non-streaming answer in 32 KiB reads; stream 2000 chat chunks, the usage
// chunk and [DONE], one read each.
func meterInputs() (answer, stream [][]byte) {
	body := `{"choices":[{"message":{"content":"` + strings.Repeat("lorem ipsum ", 1<<20/12) + `"}}],"usage":{"prompt_tokens":5,"completion_tokens":7}}`
	for i := 0; i < len(body); i += 32 << 10 {
		answer = append(answer, []byte(body[i:min(len(body), i+32<<10)]))
	}
	for i := range 2000 {
		stream = append(stream, fmt.Appendf(nil, `data: {"id":"s1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok%d"},"finish_reason":null}],"usage":null}`+"\n\n", i))
	}
	stream = append(stream, []byte(`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2000}}`+"\n\n"), []byte("data: [DONE]\n\n"))
	return answer, stream
}

func BenchmarkMeterAnswerBaseline(b *testing.B) { a, _ := meterInputs(); benchmarkChunks(b, a, nil) }
func BenchmarkMeterAnswer(b *testing.B) {
	a, _ := meterInputs()
	benchmarkChunks(b, a, func() *meter { return &meter{} })
}
func BenchmarkMeterStreamBaseline(b *testing.B) { _, s := meterInputs(); benchmarkChunks(b, s, nil) }
func BenchmarkMeterStream(b *testing.B) {
	_, s := meterInputs()
	benchmarkChunks(b, s, func() *meter { return &meter{stream: true} })
}
func BenchmarkMeterStreamHidden(b *testing.B) {
	_, s := meterInputs()
	benchmarkChunks(b, s, func() *meter { return &meter{stream: true, hide: true} })
}
