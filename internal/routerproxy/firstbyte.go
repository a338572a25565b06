/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import "io"

// firstByteReader calls first once, when the first byte of a response body (or its end) is read.
//
// Note: a streamed completion's first chunk follows the prompt's prefill (vLLM, SGLang, TGI and
// llama.cpp's server send it with the first token); a response that is not streamed sends its
// body only at the end, so its prefill counts until then: an upper bound, never an omission.
type firstByteReader struct {
	io.ReadCloser
	first func()
}

func (r *firstByteReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if (n > 0 || err != nil) && r.first != nil {
		r.first()
		r.first = nil
	}
	return n, err
}
