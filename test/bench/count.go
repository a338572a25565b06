/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"net/http"
	"sort"
	"strings"
	"sync"
)

// counter counts the requests a rest.Config sends, by verb and resource ("PATCH deployments",
// "GET services/status", "LIST inferenceservices", "WATCH deployments").
type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func newCounter() *counter { return &counter{m: map[string]int{}} }

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		key := verb(req) + " " + resource(req.URL.Path)
		c.mu.Lock()
		c.m[key]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// snapshot copies the counts.
func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

// delta is after minus before, without zero entries and without WATCH, whose long-lived
// requests are the informers' and not per reconcile.
func delta(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if strings.HasPrefix(k, "WATCH ") {
			continue
		}
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// split sums the counts into reads (GET, LIST) and writes (everything else).
func split(m map[string]int) (reads, writes int) {
	for k, v := range m {
		if strings.HasPrefix(k, "GET ") || strings.HasPrefix(k, "LIST ") {
			reads += v
		} else {
			writes += v
		}
	}
	return reads, writes
}

func keys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func verb(req *http.Request) string {
	if req.Method != http.MethodGet {
		return req.Method
	}
	if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
		return "WATCH"
	}
	parts := pathParts(req.URL.Path)
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) <= 1 { // a collection
		return "LIST"
	}
	return "GET"
}

// resource is the resource (with its subresource) of an API path.
func resource(path string) string {
	parts := pathParts(path)
	if len(parts) == 0 {
		return path
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) >= 3 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}

// pathParts is the path after /api/v1 or /apis/group/version.
func pathParts(path string) []string {
	p := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(p) >= 2 && p[0] == "api":
		return p[2:]
	case len(p) >= 3 && p[0] == "apis":
		return p[3:]
	}
	return nil
}
