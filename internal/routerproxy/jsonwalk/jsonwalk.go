/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package jsonwalk steps over JSON values by offset, without decoding them: the proxy finds a
// request's model, its messages and its prompt in bodies of megabytes this way, with no copy and
// no allocation. The body scanner and the prefix hasher share it.
//
// Every function expects JSON that encoding/json's Valid accepted (the proxy checks each body
// before it routes it); on malformed input they never fail nor panic, and stop early.
package jsonwalk

import "bytes"

// SkipSpace is the offset of the first byte at or after i that is not JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString is the offset right after the string whose opening quote is at i.
//
// Note: it finds the closing quote with bytes.IndexByte, so a long prompt is skipped at memory
// speed: a quote ends the string unless an odd number of backslashes precedes it.
func SkipString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		n := 0
		for q-1-n > i && b[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return len(b)
}

// SkipValue is the offset right after the value (string, object, array, number, literal) that
// starts at i.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = SkipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
