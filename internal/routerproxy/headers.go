/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"net/http"
	"slices"
	"strings"
)

// hopByHop are the headers of one connection, never forwarded (RFC 9110 section 7.6.1, and the
// list net/http/httputil.ReverseProxy drops).
var hopByHop = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// clientCredentials are the client's own credentials: they authenticate the client to the proxy
// (or to nothing) and never reach a backend, which gets the backend's own key instead.
var clientCredentials = []string{"Authorization", "Api-Key", "X-Api-Key"}

// The header policy (docs/router.md, "Headers"):
//   - to an InferenceService: every client header but hop-by-hop ones and the client's
//     credentials; back: every header but hop-by-hop ones.
//   - to an external API: only externalRequest (content negotiation, the request id, the user
//     agent, OpenAI-Beta), then the backend's key, organization and project from its Secret;
//     back: only externalResponse and the X-Ratelimit-* family. A client's cookies, organization,
//     project or other providers' keys never reach a provider (they would pick what the
//     operator's key is billed to), and a provider's cookies and identity never reach a client.
var (
	externalRequest = []string{
		"Accept", "Accept-Language", "Content-Type", "User-Agent", "Openai-Beta",
	}
	externalResponse = []string{
		"Content-Type", "Content-Encoding", "Content-Language", "Content-Length", "Cache-Control", "Vary",
		"Retry-After", "Retry-After-Ms", "Openai-Processing-Ms", "Openai-Version",
	}
)

// requestHeaders are the headers an attempt at b sends, from the client's.
func requestHeaders(dst, client http.Header, b *backend) {
	c := b.creds.Load()
	if b.external {
		for _, k := range externalRequest {
			if v, ok := client[k]; ok {
				dst[k] = v
			}
		}
		if c.organization != "" {
			dst.Set("OpenAI-Organization", c.organization)
		}
		if c.project != "" {
			dst.Set("OpenAI-Project", c.project)
		}
	} else {
		copyHeaders(dst, client, clientCredentials)
	}
	if c.header != "" {
		dst.Set(c.header, c.value)
	}
	// The meter reads usage and tokens out of the answer's bytes: a compressed answer would be
	// unreadable (and a usage chunk the proxy asked for could not be kept from the client). The
	// client's own Accept-Encoding (SDKs send gzip by default) says nothing of what the proxy
	// can read.
	dst.Set("Accept-Encoding", "identity")
}

// encoded says a response body is compressed (Content-Encoding other than identity).
func encoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// responseHeaders are the headers a client gets from b's response.
func responseHeaders(dst, upstream http.Header, b *backend) {
	if !b.external {
		copyHeaders(dst, upstream, nil)
		return
	}
	for k, v := range upstream {
		if slices.Contains(externalResponse, k) || strings.HasPrefix(k, "X-Ratelimit-") {
			dst[k] = v
		}
	}
}

// copyHeaders copies src into dst without hop-by-hop headers, the headers src's Connection names,
// and the names in drop.
func copyHeaders(dst, src http.Header, drop []string) {
	var named []string
	for _, v := range src["Connection"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				named = append(named, http.CanonicalHeaderKey(f))
			}
		}
	}
	for k, vv := range src {
		if slices.Contains(hopByHop, k) || slices.Contains(drop, k) || slices.Contains(named, k) {
			continue
		}
		dst[k] = vv // shared, never mutated: callers Set whole entries
	}
}
