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
