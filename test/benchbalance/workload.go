/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchbalance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/prefix"
)

// Workload is what the requests of a scenario say.
type Workload string

// Workloads.
const (
	// Popular prompts: each request is one of Prefixes system prompts, drawn with a Zipf
	// distribution, and a question of its own.
	Popular Workload = "popular"
	// Conversations: Users users, each on one of SystemPrompts long system prompts, each request
	// the next turn of its user's conversation (all the turns before, then a new question); a
	// conversation ends after Turns turns and the user starts another.
	Conversations Workload = "conversations"
)

// request is one arrival: what every policy needs to choose, computed before the run.
type request struct {
	at      time.Duration
	body    []byte   // the chat completions body a client sends
	blocks  []uint64 // the prompt's blocks, as the proxy computes them
	ringKey uint64   // the key the proxy hashed before the prefix scorer (ringKey)
	// kv are the blocks a simulated engine holds for the prompt: blocks, then, for a prompt longer
	// than the proxy hashes (prefix.DefaultMaxBlocks), blocks of its own (engine simulation).
	kv []uint64
	// session is the conversation, document or popular prompt the request belongs to.
	session uint64
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// arrivals draws the open-loop Poisson arrivals of a run and what each one asks.
func arrivals(o Options, w Workload, h *prefix.Hasher) []request {
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	pick := rand.New(rand.NewPCG(o.Seed, 2))
	var next func() ([]message, uint64)
	switch w {
	case Conversations:
		next = conversations(o, pick)
	default:
		next = popular(o, pick)
	}
	var out []request
	for at := time.Duration(0); ; {
		at += time.Duration(rng.ExpFloat64() / o.Rate * float64(time.Second))
		if at >= o.Duration {
			return out
		}
		msgs, session := next()
		out = append(out, chatRequest(at, msgs, session, h))
	}
}

// chatRequest is one chat completions request of msgs, arriving at at.
func chatRequest(at time.Duration, msgs []message, session uint64, h *prefix.Hasher) request {
	body, _ := json.Marshal(map[string]any{"model": "llama-3", "messages": msgs})
	var rb struct{ Messages json.RawMessage }
	_ = json.Unmarshal(body, &rb)
	blocks := h.Chat("llama-3", rb.Messages)
	kv := slices.Clone(blocks)
	for i := len(kv); i < len(body)/prefix.DefaultBlockBytes; i++ {
		kv = append(kv, balance.Hash(fmt.Appendf(nil, "%d/%d", kv[len(kv)-1], i)))
	}
	return request{at: at, body: body, blocks: blocks, ringKey: ringKey(body), kv: kv, session: session}
}

// sentence is filler text for prompt i: distinct per i from its first bytes.
func sentence(kind string, i, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d. ", kind, i)
	for b.Len() < n {
		fmt.Fprintf(&b, "Rule %d.%d: answer exactly, cite the source, keep it brief. ", i, b.Len())
	}
	return b.String()[:n]
}

// popular is the workload of the first scenarios: system prompts of PromptBlocks blocks drawn
// with a Zipf distribution over Prefixes, each with a question of its own.
func popular(o Options, rng *rand.Rand) func() ([]message, uint64) {
	zipf := rand.NewZipf(rng, o.ZipfS, 1, uint64(o.Prefixes-1))
	n := 0
	return func() ([]message, uint64) {
		n++
		i := int(zipf.Uint64())
		return []message{{"system", sentence("You are assistant", i, o.PromptBlocks*prefix.DefaultBlockBytes)}, {"user", fmt.Sprintf("Question %d?", n)}}, uint64(i)
	}
}

// conversations is the multi-turn workload: long shared system prompts of SystemBytes bytes and
// more (the k-th is k/2 times longer), and per-user conversations that grow turn by turn.
func conversations(o Options, rng *rand.Rand) func() ([]message, uint64) {
	systems := make([]string, o.SystemPrompts)
	for k := range systems {
		systems[k] = sentence("You are the support agent of product", k, o.SystemBytes+k*o.SystemBytes/2)
	}
	type user struct {
		system, conv, turn int
	}
	users := make([]user, o.Users)
	for u := range users {
		users[u].system = u % len(systems)
	}
	return func() ([]message, uint64) {
		u := rng.IntN(len(users))
		s := &users[u]
		if s.turn == o.Turns {
			s.conv, s.turn = s.conv+1, 0
		}
		msgs := []message{{"system", systems[s.system]}}
		for t := 0; t <= s.turn; t++ {
			if t > 0 {
				msgs = append(msgs, message{"assistant", sentence(fmt.Sprintf("Answer to user %d, conversation %d, turn", u, s.conv), t, 480)})
			}
			msgs = append(msgs, message{"user", sentence(fmt.Sprintf("User %d, conversation %d asks, turn", u, s.conv), t, 160)})
		}
		s.turn++
		return msgs, uint64(u)<<32 | uint64(s.conv)
	}
}

// ringKey is the key the proxy's PrefixAffinity hashed onto its ring before the prefix scorer,
// kept here to compare with: "chat", 0, the model, 0, then the messages as the client's raw JSON
// from the first through the first user message, joined by 0 bytes, cut to 4096 bytes.
func ringKey(body []byte) uint64 {
	var rb struct {
		Model    string
		Messages []json.RawMessage
	}
	_ = json.Unmarshal(body, &rb)
	key := []byte("chat\x00" + rb.Model + "\x00")
	var lead []byte
	for i, m := range rb.Messages {
		if i > 0 {
			lead = append(lead, 0)
		}
		lead = append(lead, m...)
		var role struct{ Role string }
		if json.Unmarshal(m, &role) == nil && role.Role == "user" {
			break
		}
	}
	return balance.Hash(append(key, lead[:min(len(lead), 4096)]...))
}
