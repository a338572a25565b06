/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package prefix

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/llmkube/operator/internal/routerproxy/jsonwalk"
)

// The walkers read JSON that encoding/json's Valid accepted (the proxy checks every body before
// it routes it); they neither allocate nor fail, and on malformed input they return early. They
// step over values with jsonwalk, as the proxy's body scanner does.

// elements calls f with each element of the array arr until f returns false.
func elements(arr []byte, f func(v []byte) bool) {
	if len(arr) < 2 || arr[0] != '[' {
		return
	}
	for i := jsonwalk.SkipSpace(arr, 1); i < len(arr) && arr[i] != ']'; {
		end := jsonwalk.SkipValue(arr, i)
		if end <= i || !f(arr[i:end]) {
			return
		}
		i = jsonwalk.SkipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = jsonwalk.SkipSpace(arr, i+1)
		}
	}
}

// members calls f with the quoted key and the value of each member of the object obj.
func members(obj []byte, f func(key, v []byte)) {
	if len(obj) < 2 || obj[0] != '{' {
		return
	}
	for i := jsonwalk.SkipSpace(obj, 1); i < len(obj) && obj[i] == '"'; {
		keyEnd := jsonwalk.SkipString(obj, i)
		colon := jsonwalk.SkipSpace(obj, keyEnd)
		start := jsonwalk.SkipSpace(obj, colon+1)
		end := jsonwalk.SkipValue(obj, start)
		if end <= start {
			return
		}
		f(obj[i:keyEnd], obj[start:end])
		i = jsonwalk.SkipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = jsonwalk.SkipSpace(obj, i+1)
		}
	}
}

// field is the value of obj's member named name (the last one, as encoding/json reads a
// duplicated key), nil when absent. Names compare exactly, as the model servers read them.
func field(obj []byte, name string) []byte {
	var out []byte
	members(obj, func(key, v []byte) {
		if keyIs(key, name) {
			out = v
		}
	})
	return out
}

// keyIs reports whether the quoted key's text is name; only a key with escapes is decoded.
func keyIs(quoted []byte, name string) bool {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1:len(quoted)-1]) == name
	}
	var got []byte
	decodeString(quoted, func(p []byte) bool { got = append(got, p...); return len(got) <= len(name) })
	return string(got) == name
}

// isString reports whether v is a JSON string.
func isString(v []byte) bool { return len(v) >= 2 && v[0] == '"' }

// decodeString feeds the text of the JSON string quoted to emit in pieces, decoding escapes as
// encoding/json does (a lone surrogate becomes U+FFFD), until emit returns false. The raw bytes
// between escapes are passed as they are: the text is never copied whole.
func decodeString(quoted []byte, emit func([]byte) bool) {
	if !isString(quoted) {
		return
	}
	s := quoted[1 : len(quoted)-1]
	var buf [utf8.UTFMax]byte
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			emit(s)
			return
		}
		if i > 0 {
			if !emit(s[:i]) {
				return
			}
			s = s[i:]
			continue
		}
		if len(s) < 2 {
			return
		}
		var one byte
		switch s[1] {
		case '"', '\\', '/':
			one = s[1]
		case 'b':
			one = '\b'
		case 'f':
			one = '\f'
		case 'n':
			one = '\n'
		case 'r':
			one = '\r'
		case 't':
			one = '\t'
		case 'u':
			r := hex4(s[2:])
			if r < 0 {
				return
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2 = hex4(s[2:])
				}
				if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
					r = d
					s = s[6:]
				} else {
					r = unicode.ReplacementChar
				}
			}
			if !emit(buf[:utf8.EncodeRune(buf[:], r)]) {
				return
			}
			continue
		default:
			return
		}
		buf[0] = one
		if !emit(buf[:1]) {
			return
		}
		s = s[2:]
	}
}

// hex4 is the value of the 4 hex digits at the start of b, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
