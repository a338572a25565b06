/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package prefix

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceText is the prompt text of messages built with encoding/json, the slow obvious way:
// the walker must give the same text without decoding anything whole.
func referenceText(messages []byte) (string, bool) {
	var ms []json.RawMessage
	if json.Unmarshal(messages, &ms) != nil {
		return "", false
	}
	var b strings.Builder
	str := func(raw json.RawMessage) (string, bool) {
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	for _, raw := range ms {
		var m map[string]json.RawMessage
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
			continue
		}
		role, _ := str(m["role"])
		b.WriteString("\x1e" + role + "\x1f")
		if s, ok := str(m["content"]); ok {
			b.WriteString(s)
			continue
		}
		var parts []json.RawMessage
		if c := m["content"]; len(c) == 0 || c[0] != '[' || json.Unmarshal(c, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if s, ok := str(p); ok {
				b.WriteString(s)
				continue
			}
			var pm map[string]json.RawMessage
			if len(p) == 0 || p[0] != '{' || json.Unmarshal(p, &pm) != nil {
				continue
			}
			if s, ok := str(pm["text"]); ok {
				b.WriteString(s)
				continue
			}
			t, _ := str(pm["type"])
			b.WriteString("\x1d" + t + "\x1d")
		}
	}
	return b.String(), true
}

// referenceBlocks hashes text block by block with the hasher's seed.
func referenceBlocks(h *Hasher, kind, model, text string) []uint64 {
	var out []uint64
	first := kind + "\x00" + model + "\x00"
	var prev []byte
	for i := 0; i+h.BlockBytes <= len(text) && len(out) < h.MaxBlocks; i += h.BlockBytes {
		var mh maphash.Hash
		mh.SetSeed(h.seed)
		if prev == nil {
			mh.WriteString(first)
		} else {
			mh.Write(prev)
		}
		mh.WriteString(text[i : i+h.BlockBytes])
		sum := mh.Sum64()
		out = append(out, sum)
		prev = binary.LittleEndian.AppendUint64(nil, sum)
	}
	return out
}

// FuzzChatBlocks: for any JSON a client may send as messages, the streaming walk gives the blocks
// of the text encoding/json reads, and never panics.
func FuzzChatBlocks(f *testing.F) {
	f.Add([]byte(`[{"role":"system","content":"You are helpful and brief."},{"role":"user","content":"hi"}]`))
	f.Add([]byte(`[{"content":[{"type":"text","text":"a\u00e9\ud83d\ude00b"},{"type":"image_url"}],"role":"user"},{"role":1},"x",{"role":"a","role":"b","content":"\ud800x"}]`))
	f.Add([]byte(`[{"r\u006fle":"tool","content":["bare part",{"text":5,"type":"t"}]}]`))
	f.Fuzz(func(t *testing.T, messages []byte) {
		h := NewHasher(7, 50)
		got := h.Chat("m", messages) // must not panic, whatever the input
		if !json.Valid(messages) || !utf8.Valid(messages) {
			return // the proxy refuses invalid JSON before; invalid UTF-8 is hashed as sent
		}
		text, ok := referenceText(messages)
		if !ok {
			if got != nil {
				t.Fatalf("blocks for messages that are not an array: %s", messages)
			}
			return
		}
		want := referenceBlocks(h, KindChat, "m", text)
		if len(want) == 0 {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Fatalf("walk and encoding/json disagree on %s: text %q, %d blocks against %d", messages, text, len(got), len(want))
		}
	})
}
