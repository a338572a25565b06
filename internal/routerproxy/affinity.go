/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"encoding/json"
	"net/http"

	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// SessionHeader pins a request to a pod by its value instead of its prompt.
const SessionHeader = "X-Session-Id"

// affinityPrefixBytes bounds how much of the leading messages is hashed: requests that agree on
// this much share that much of their KV-cache prefix, and hashing stays cheap for long prompts.
const affinityPrefixBytes = 4096

// affinityKey is the key PrefixAffinity places a request by (README: "What prefix affinity
// hashes"):
//   - the X-Session-Id header when set: "session", 0, its value;
//   - else for /v1/chat/completions: "chat", 0, the model, 0, then the JSON of the leading
//     messages as the client sent them (every message from the first through the first with
//     role "user"), joined by 0 bytes, cut to the first 4096 bytes;
//   - else for /v1/completions with a string prompt: "completion", 0, the model, 0, the
//     prompt's first 4096 bytes;
//   - else no key (embeddings, other prompt shapes): least request.
func affinityKey(r *http.Request, body []byte, rb requestBody) (uint64, bool) {
	if s := r.Header.Get(SessionHeader); s != "" {
		return balance.Hash([]byte("session\x00" + s)), true
	}
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Prompt   json.RawMessage   `json:"prompt"`
	}
	if json.Unmarshal(body, &req) != nil {
		return 0, false
	}
	var key []byte
	switch {
	case r.URL.Path == "/v1/chat/completions" && len(req.Messages) > 0:
		key = append([]byte("chat\x00"+rb.model+"\x00"), leadingMessages(req.Messages)...)
	case r.URL.Path == "/v1/completions" && len(req.Prompt) > 0 && req.Prompt[0] == '"':
		var prompt string
		if json.Unmarshal(req.Prompt, &prompt) != nil {
			return 0, false
		}
		key = append([]byte("completion\x00"+rb.model+"\x00"), prompt[:min(len(prompt), affinityPrefixBytes)]...)
	default:
		return 0, false
	}
	return balance.Hash(key), true
}

// leadingMessages are the raw messages from the first through the first user message, joined by
// 0 bytes, cut to affinityPrefixBytes.
func leadingMessages(msgs []json.RawMessage) []byte {
	var out []byte
	for i, m := range msgs {
		if i > 0 {
			out = append(out, 0)
		}
		out = append(out, m...)
		if len(out) >= affinityPrefixBytes {
			return out[:affinityPrefixBytes]
		}
		var role struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(m, &role) == nil && role.Role == "user" {
			break
		}
	}
	return out
}
