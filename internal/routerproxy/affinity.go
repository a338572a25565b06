/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"net/http"

	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/prefix"
)

// SessionHeader pins a request to a pod by its value instead of its prompt.
const SessionHeader = "X-Session-Id"

// affinity is what PrefixAffinity chooses a request's pod by (docs/router-balancing.md):
//   - the X-Session-Id header, when set, as a key on the consistent-hash ring: "session", 0, its
//     value (the request is pinned whatever its prompt);
//   - the chain hashes of its prompt's blocks (internal/routerproxy/prefix): of the messages for
//     POST /v1/chat/completions, of a string prompt for /v1/completions, of the instructions and
//     input for /v1/responses; none for other requests (least request).
//
// A pinned request's blocks are computed too, so that the pod it goes to is known to hold them.
func (b *Balancer) affinity(r *http.Request, body []byte, rb requestBody) balance.Request {
	var pr balance.Request
	if s := r.Header.Get(SessionHeader); s != "" {
		pr.Key, pr.HasKey = balance.Hash([]byte("session\x00"+s)), true
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		pr.Blocks = b.hasher.Chat(rb.model, body[rb.messagesStart:rb.messagesEnd])
	case "/v1/completions":
		pr.Blocks = b.hasher.Completion(rb.model, body[rb.promptStart:rb.promptEnd])
	case "/v1/responses":
		pr.Blocks = b.hasher.Responses(rb.model, body[rb.instructionsStart:rb.instructionsEnd], body[rb.inputStart:rb.inputEnd])
	}
	return pr
}

// prefixHasher is the proxy's Hasher for o's block size and maximum.
func prefixHasher(o BalancerOptions) *prefix.Hasher {
	return prefix.NewHasher(o.PrefixBlockBytes, o.PrefixMaxBlocks)
}
