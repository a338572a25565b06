/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package prefix

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// chatBody is the messages of a conversation as JSON, the way a client would send them.
func chatJSON(t testing.TB, msgs ...[2]string) []byte {
	t.Helper()
	type m struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var ms []m
	for _, x := range msgs {
		ms = append(ms, m{x[0], x[1]})
	}
	b, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The text is cut into whole blocks: a prompt of 2.5 blocks has 2, one shorter than a block has
// none.
func TestBlocksAreWholeBlocksOfTheText(t *testing.T) {
	h := NewHasher(16, 100)
	for _, tc := range []struct {
		prompt string
		want   int
	}{{strings.Repeat("a", 15), 0}, {strings.Repeat("a", 16), 1}, {strings.Repeat("a", 40), 2}, {strings.Repeat("a", 64), 4}} {
		got := h.Completion("m", []byte(`"`+tc.prompt+`"`))
		if len(got) != tc.want {
			t.Errorf("%d bytes of prompt: %d blocks, want %d", len(tc.prompt), len(got), tc.want)
		}
	}
}

// Each block's hash covers every block before it: two prompts share their first n hashes
// exactly when their texts agree on their first n blocks; the same block after another prefix
// has another hash.
func TestChainHash(t *testing.T) {
	h := NewHasher(16, 100)
	a := h.Completion("m", []byte(`"AAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBCCCCCCCCCCCCCCCC"`))
	b := h.Completion("m", []byte(`"AAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBDDDDDDDDDDDDDDDD"`))
	c := h.Completion("m", []byte(`"XAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBCCCCCCCCCCCCCCCC"`))
	if len(a) != 3 || a[0] != b[0] || a[1] != b[1] || a[2] == b[2] {
		t.Errorf("prompts agreeing on 2 of 3 blocks: %x and %x", a, b)
	}
	if a[1] == c[1] || a[2] == c[2] {
		t.Errorf("the same second and third block after another first block hash the same: %x and %x", a, c)
	}
	if slices.Equal(h.Completion("m", []byte(`"AAAAAAAAAAAAAAAA"`)), h.Completion("other", []byte(`"AAAAAAAAAAAAAAAA"`))) {
		t.Error("the same prompt to two models has the same blocks")
	}
	if slices.Equal(h.Completion("m", []byte(`"AAAAAAAAAAAAAAAA"`)), NewHasher(16, 100).Completion("m", []byte(`"AAAAAAAAAAAAAAAA"`))) {
		t.Error("two hashers (two proxy processes) share a seed")
	}
}

// A conversation's next turn starts with its previous turn's blocks; the same words from another
// role are another prompt.
func TestConversationGrowsItsPrefix(t *testing.T) {
	h := NewHasher(32, 1000)
	sys := [2]string{"system", strings.Repeat("You are a careful assistant. ", 10)}
	turn1 := h.Chat("m", chatJSON(t, sys, [2]string{"user", "What is a KV cache, in one paragraph please?"}))
	turn2 := h.Chat("m", chatJSON(t, sys, [2]string{"user", "What is a KV cache, in one paragraph please?"},
		[2]string{"assistant", "It keeps the attention keys and values of the tokens seen so far."}, [2]string{"user", "And prefix caching?"}))
	if len(turn1) < 8 || len(turn2) <= len(turn1) {
		t.Fatalf("%d and %d blocks", len(turn1), len(turn2))
	}
	// The last block of turn 1 is partial in turn 1's text only if it does not end on a boundary;
	// every whole block of turn 1 is in turn 2.
	if !slices.Equal(turn1, turn2[:len(turn1)]) {
		t.Error("the next turn does not start with the previous turn's blocks")
	}
	asUser := h.Chat("m", chatJSON(t, [2]string{"user", sys[1]}))
	if asUser[0] == turn1[0] {
		t.Error("the system prompt sent as a user message has the same first block")
	}
}

// The text counts, not the JSON: key order, whitespace and escapes change nothing; the same for
// completions and the Responses API (a string input is one user message).
func TestKeyOrderWhitespaceAndEscapesDoNotChangeBlocks(t *testing.T) {
	h := NewHasher(8, 100)
	want := h.Chat("m", []byte(`[{"role":"system","content":"Sé brief and exact."},{"role":"user","content":[{"type":"text","text":"hello there, "},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"friend"}]}]`))
	for _, same := range []string{
		"[ {\"content\" : \"S\\u00e9 brief and exact.\", \"role\":\"system\"},\n\t{\"content\":[{\"text\":\"hello there, \",\"type\":\"text\"},{\"image_url\":{\"url\":\"y\"},\"type\":\"image_url\"},{\"type\":\"text\",\"text\":\"fri\\u0065nd\"}],\"role\":\"user\",\"name\":\"bob\"} ]",
	} {
		if got := h.Chat("m", []byte(same)); !slices.Equal(got, want) {
			t.Errorf("another spelling of the same messages:\n%x\n%x", got, want)
		}
	}
	if got := h.Chat("m", []byte(`[{"role":"user","content":"Sé brief and exact."},{"role":"user","content":"hello there, friend"}]`)); got[0] == want[0] {
		t.Error("another role has the same first block")
	}
	r1 := h.Responses("m", []byte(`"Be brief."`), []byte(`"hello there, friend"`))
	r2 := h.Responses("m", []byte(`"Be\u0020brief."`), []byte(`[ {"content":[{"type":"input_text","text":"hello there, friend"}], "role":"user"} ]`))
	if len(r1) == 0 || !slices.Equal(r1, r2) {
		t.Errorf("a Responses input as a string and as one user item differ: %x %x", r1, r2)
	}
	if h.Completion("m", []byte(`[1,2,3]`)) != nil || h.Chat("m", []byte(`"x"`)) != nil {
		t.Error("a token-array prompt or a non-array messages has blocks")
	}
}

// A prompt far longer than MaxBlocks blocks gives MaxBlocks blocks, and its hashing stops there.
func TestMaxBlocks(t *testing.T) {
	h := NewHasher(64, 10)
	big := []byte(`"` + strings.Repeat("x", 1<<20) + `"`)
	if got := h.Completion("m", big); len(got) != 10 {
		t.Fatalf("%d blocks, want 10", len(got))
	}
	allocs := testing.AllocsPerRun(10, func() { h.Completion("m", big) })
	if allocs > 4 {
		t.Errorf("%v allocations for a 1 MiB prompt", allocs)
	}
	msgs := chatJSON(t, [2]string{"system", strings.Repeat("y", 1<<20)}, [2]string{"user", "q"})
	if got := h.Chat("m", msgs); len(got) != 10 {
		t.Fatalf("chat: %d blocks, want 10", len(got))
	}
}

func BenchmarkChat1MiB(b *testing.B) {
	h := NewHasher(DefaultBlockBytes, DefaultMaxBlocks)
	msgs := chatJSON(b, [2]string{"system", strings.Repeat("You are helpful. ", 1<<16)}, [2]string{"user", "q"})
	b.SetBytes(int64(len(msgs)))
	b.ReportAllocs()
	for b.Loop() {
		h.Chat("m", msgs)
	}
}

func ExampleHasher_Chat() {
	h := NewHasher(16, 100)
	blocks := h.Chat("llama", []byte(`[{"role":"system","content":"You answer in French, briefly."},{"role":"user","content":"Bonjour"}]`))
	fmt.Println(len(blocks)) // 0x1E system 0x1F + 30 bytes + 0x1E user 0x1F + 7 bytes = 48 bytes
	// Output: 3
}
