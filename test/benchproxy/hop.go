/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"

	"github.com/llmkube/operator/internal/routerproxy"
)

// PlainHopEnv names the environment variable that makes a benchmark binary (cmd/bench-proxy, or
// this package's test binary) serve the plain hop instead: its value is the upstream URL.
const PlainHopEnv = "BENCH_PROXY_PLAIN_HOP_UPSTREAM"

// ServePlainHop is the baseline: the same hop without routing, the standard library's
// httputil.ReverseProxy with the proxy's own transport settings (so the comparison is about the
// routing, not about connection pooling). ReverseProxy flushes text/event-stream responses after
// every write by itself, as the proxy does.
// It prints its address on stdout and serves until killed.
func ServePlainHop(upstreamURL string) error {
	target, err := url.Parse(upstreamURL)
	if err != nil {
		return err
	}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: routerproxy.NewTransport(),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stdout, ln.Addr().String())
	// Full duplex: by default an HTTP/1 server closes the unread part of a request body once the
	// handler starts its response, and ReverseProxy's transport may still be finishing the copy of
	// that body upstream when the upstream has already answered. The copy then fails and the
	// transport closes the upstream connection under the response ("read error during body copy:
	// use of closed network connection", golang/go#40747; it failed CI once). The router-proxy
	// reads the body before it dials, so it cannot hit this; the baseline must not fail for a
	// reason the proxy does not share.
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
}
