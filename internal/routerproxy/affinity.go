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

// affinityKey is the key PrefixAffinity places a request by (docs/router.md: "What prefix affinity
// hashes"):
//   - the X-Session-Id header when set: "session", 0, its value;
//   - else for /v1/chat/completions: "chat", 0, the model, 0, then the JSON of the leading
//     messages as the client sent them (every message from the first through the first with
//     role "user"), joined by 0 bytes, cut to the first 4096 bytes;
//   - else for /v1/completions with a string prompt: "completion", 0, the model, 0, the
//     prompt's first 4096 bytes;
//   - else no key (embeddings, other prompt shapes): least request.
//
// Note: it reads the spans scanBody found; it decodes no more than the first 4096 bytes' worth,
// whatever the prompt's size.
func affinityKey(r *http.Request, body []byte, rb requestBody) (uint64, bool) {
	if s := r.Header.Get(SessionHeader); s != "" {
		return balance.Hash([]byte("session\x00" + s)), true
	}
	messages := body[rb.messagesStart:rb.messagesEnd]
	prompt := body[rb.promptStart:rb.promptEnd]
	var key []byte
	switch {
	case r.URL.Path == "/v1/chat/completions" && len(messages) > 2 && messages[0] == '[':
		key = append([]byte("chat\x00"+rb.model+"\x00"), leadingMessages(messages)...)
	case r.URL.Path == "/v1/completions" && len(prompt) > 0 && prompt[0] == '"':
		s, ok := stringPrefix(prompt, affinityPrefixBytes)
		if !ok {
			return 0, false
		}
		key = append([]byte("completion\x00"+rb.model+"\x00"), s...)
	default:
		return 0, false
	}
	return balance.Hash(key), true
}

// leadingMessages are the raw messages of the array arr from the first through the first user
// message, joined by 0 bytes, cut to affinityPrefixBytes.
func leadingMessages(arr []byte) []byte {
	var out []byte
	i := skipSpace(arr, 1)
	for n := 0; i < len(arr) && arr[i] != ']'; n++ {
		end := skipValue(arr, i)
		m := arr[i:end]
		if n > 0 {
			out = append(out, 0)
		}
		if len(out)+len(m) >= affinityPrefixBytes {
			return append(out, m[:affinityPrefixBytes-len(out)]...)
		}
		out = append(out, m...)
		var role struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(m, &role) == nil && role.Role == "user" {
			break
		}
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return out
}

// stringPrefix is the first n bytes of the JSON string quoted, decoding only what it needs: an
// escape is at most 6 bytes for one byte of text, so 6n+12 bytes of the JSON hold at least n.
func stringPrefix(quoted []byte, n int) ([]byte, bool) {
	raw := quoted
	if limit := 6*n + 12; len(raw) > limit {
		j := 1
		for j < limit {
			if raw[j] == '\\' {
				if raw[j+1] == 'u' {
					j += 6
				} else {
					j += 2
				}
				continue
			}
			j++
		}
		raw = append(append([]byte(nil), raw[:j]...), '"')
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s[:min(len(s), n)]), true
}
