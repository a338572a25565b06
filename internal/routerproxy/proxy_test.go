/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// upstream is a fake OpenAI-compatible backend that records what it received.
type upstream struct {
	*httptest.Server
	status atomic.Int32
	hits   atomic.Int32
	last   atomic.Pointer[http.Request]
	body   atomic.Pointer[string]
}

func newUpstream(t *testing.T, name string) *upstream {
	u := &upstream{}
	u.status.Store(200)
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		s := string(b)
		u.body.Store(&s)
		u.last.Store(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "secret")
		w.WriteHeader(int(u.status.Load()))
		_, _ = io.WriteString(w, `{"served_by":"`+name+`"}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func newProxy(t *testing.T, doc routingv1.Document, mutate func(*Options)) (*Proxy, *prometheus.Registry) {
	t.Helper()
	data, err := routingv1.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := routingv1.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	o := Options{Document: parsed, MaxBodyBytes: 1 << 10, RequestTimeout: 2 * time.Second, FailureThreshold: 2, Cooldown: time.Minute, Registerer: reg}
	if mutate != nil {
		mutate(&o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	p.SetReady(true)
	return p, reg
}

func do(p http.Handler, method, path, body string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    string  `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("not an OpenAI-style error: %s", w.Body.String())
	}
	return e.Error.Code
}

func TestRoutingAndErrors(t *testing.T) {
	local, cloud := newUpstream(t, "local"), newUpstream(t, "cloud")
	p, _ := newProxy(t, routingv1.Document{
		Backends: []routingv1.Backend{
			{Name: "local", Kind: routingv1.KindInferenceService, URL: local.URL},
			{Name: "cloud", Kind: routingv1.KindExternal, URL: cloud.URL + "/v1", Model: "gpt-4o"},
		},
		Rules: []routingv1.Rule{
			{Name: "exact", Models: []string{"llama"}, Backend: "local"},
			{Name: "prefix", Models: []string{"gpt-*"}, Backend: "cloud"},
			{Name: "gone", Models: []string{"ghost"}, Backend: "unresolved"},
		},
	}, nil)
	for _, tc := range []struct {
		method, path, body string
		status             int
		code, backend      string
	}{
		{"POST", "/v1/chat/completions", `{"model":"llama"}`, 200, "", "local"},
		{"POST", "/v1/embeddings", `{"model":"gpt-x","input":"a"}`, 200, "", "cloud"},
		{"POST", "/v1/chat/completions", `{"model":"mistral"}`, 404, "model_not_found", ""},
		{"POST", "/v1/chat/completions", `{"model":"ghost"}`, 503, "backend_unavailable", ""},
		{"POST", "/v1/chat/completions", `{"model":`, 400, "invalid_json", ""},
		{"POST", "/v1/chat/completions", `{"model":1}`, 400, "invalid_type", ""},
		{"POST", "/v1/chat/completions", `{"messages":[]}`, 400, "missing_required_parameter", ""},
		{"POST", "/v1/completions", `{"model":"llama","p":"` + strings.Repeat("x", 2<<10) + `"}`, 413, "request_too_large", ""},
		{"GET", "/v1/chat/completions", ``, 405, "method_not_supported", ""},
		{"POST", "/v1/files", `{}`, 404, "unknown_url", ""},
	} {
		w := do(p, tc.method, tc.path, tc.body, nil)
		if w.Code != tc.status {
			t.Errorf("%s %s %.40s: status %d, want %d: %s", tc.method, tc.path, tc.body, w.Code, tc.status, w.Body.String())
			continue
		}
		if tc.code != "" {
			if c := errorCode(t, w); c != tc.code {
				t.Errorf("%s %.40s: code %s, want %s", tc.path, tc.body, c, tc.code)
			}
		}
		if b := w.Header().Get("X-Llmkube-Backend"); b != tc.backend {
			t.Errorf("%.40s: x-llmkube-backend %q, want %q", tc.body, b, tc.backend)
		}
	}
	// The upstream URL rule and the model rewrite.
	if r := local.last.Load(); r.URL.Path != "/v1/chat/completions" {
		t.Errorf("an InferenceService gets the whole path: %s", r.URL.Path)
	}
	if r := cloud.last.Load(); r.URL.Path != "/v1/embeddings" || *cloud.body.Load() != `{"model":"gpt-4o","input":"a"}` {
		t.Errorf("external: path %s body %s", r.URL.Path, *cloud.body.Load())
	}

	w := do(p, "GET", "/v1/models", "", nil)
	if w.Code != 200 || w.Body.String() != `{"data":[{"id":"llama","object":"model","created":0,"owned_by":"local"}],"object":"list"}` {
		t.Errorf("models: %d %s", w.Code, w.Body.String())
	}
}

func TestCredentialsAndHeaders(t *testing.T) {
	cloud, az := newUpstream(t, "cloud"), newUpstream(t, "az")
	env := map[string]string{"BACKEND_CLOUD_API_KEY": "sk-cloud", "BACKEND_AZ_API_KEY": "az-key"}
	p, _ := newProxy(t, routingv1.Document{
		Backends: []routingv1.Backend{
			{Name: "cloud", Kind: routingv1.KindExternal, URL: cloud.URL + "/v1", Provider: "openai", CredentialsEnvPrefix: "BACKEND_CLOUD_"},
			{Name: "az", Kind: routingv1.KindExternal, URL: az.URL + "/v1", Provider: "azure-openai", CredentialsEnvPrefix: "BACKEND_AZ_"},
		},
		Rules:        []routingv1.Rule{{Name: "az", Models: []string{"az"}, Backend: "az"}},
		DefaultRoute: "cloud",
	}, func(o *Options) { o.Getenv = func(k string) string { return env[k] } })
	h := http.Header{
		"Authorization": {"Bearer client-secret"}, "Api-Key": {"client-azure"}, "X-Api-Key": {"client-x"},
		"Connection": {"X-Hop"}, "X-Hop": {"1"}, "Keep-Alive": {"timeout=5"}, "X-Request-Id": {"req-123"}, "X-Custom": {"kept"},
	}
	w := do(p, "POST", "/v1/chat/completions", `{"model":"anything"}`, h)
	r := cloud.last.Load()
	if w.Code != 200 || r.Header.Get("Authorization") != "Bearer sk-cloud" || r.Header.Get("Api-Key") != "" || r.Header.Get("X-Api-Key") != "" {
		t.Errorf("openai gets its Bearer key and never the client's: %v", r.Header)
	}
	if r.Header.Get("X-Hop") != "" || r.Header.Get("Keep-Alive") != "" || r.Header.Get("X-Custom") != "" || r.Header.Get("X-Request-Id") != "req-123" {
		t.Errorf("an external API gets the allowlist and the request id only: %v", r.Header)
	}
	if w.Header().Get("X-Request-Id") != "req-123" || w.Header().Get("X-Upstream-Hop") != "" {
		t.Errorf("response headers: %v", w.Header())
	}
	do(p, "POST", "/v1/chat/completions", `{"model":"az"}`, h)
	r = az.last.Load()
	if r.Header.Get("Api-Key") != "az-key" || r.Header.Get("Authorization") != "" {
		t.Errorf("azure gets api-key and no Authorization: %v", r.Header)
	}
	w = do(p, "POST", "/v1/chat/completions", `{"model":"az"}`, nil)
	if id := w.Header().Get("X-Request-Id"); len(id) != 32 || az.last.Load().Header.Get("X-Request-Id") != id {
		t.Errorf("a request id is created and sent: %q", id)
	}
}

func TestFallbacksAndCooldown(t *testing.T) {
	a, b, c := newUpstream(t, "a"), newUpstream(t, "b"), newUpstream(t, "c")
	a.status.Store(503)
	b.status.Store(429)
	p, reg := newProxy(t, routingv1.Document{
		Backends: []routingv1.Backend{
			{Name: "a", Kind: routingv1.KindInferenceService, URL: a.URL},
			{Name: "b", Kind: routingv1.KindInferenceService, URL: b.URL},
			{Name: "c", Kind: routingv1.KindInferenceService, URL: c.URL},
			{Name: "closed", Kind: routingv1.KindInferenceService, URL: "http://127.0.0.1:1"},
		},
		Rules: []routingv1.Rule{
			{Name: "r", Models: []string{"m"}, Backend: "a", Fallbacks: []string{"closed", "b", "c"}},
			{Name: "last", Models: []string{"only-a"}, Backend: "a"},
		},
	}, nil)
	w := do(p, "POST", "/v1/chat/completions", `{"model":"m"}`, nil)
	if w.Code != 200 || w.Header().Get("X-Llmkube-Backend") != "c" || !strings.Contains(w.Body.String(), `"c"`) {
		t.Fatalf("503, connection refused and 429 fall back to c: %d %v %s", w.Code, w.Header(), w.Body.String())
	}
	if n := testutil.ToFloat64(p.metrics.fallbacks.WithLabelValues("a")); n != 1 {
		t.Errorf("fallbacks from a: %v", n)
	}
	if n := testutil.ToFloat64(p.metrics.upstreamErrors.WithLabelValues("closed", reasonConnect)); n != 1 {
		t.Errorf("connect errors of closed: %v", n)
	}
	// a second failure in a row puts a, closed and b in cooldown (threshold 2): the next request
	// goes straight to c.
	do(p, "POST", "/v1/chat/completions", `{"model":"m"}`, nil)
	hits := a.hits.Load()
	w = do(p, "POST", "/v1/chat/completions", `{"model":"m"}`, nil)
	if w.Code != 200 || a.hits.Load() != hits {
		t.Errorf("a cooling backend is skipped: %d hits %d->%d", w.Code, hits, a.hits.Load())
	}
	// but a cooling backend that is a request's last option is still tried, and its answer relayed.
	w = do(p, "POST", "/v1/chat/completions", `{"model":"only-a"}`, nil)
	if w.Code != 503 || a.hits.Load() != hits+1 || w.Header().Get("X-Llmkube-Backend") != "a" {
		t.Errorf("last option: %d hits %d", w.Code, a.hits.Load())
	}
	if n, err := testutil.GatherAndCount(reg, "llmkube_router_requests_total"); err != nil || n == 0 {
		t.Errorf("requests counted: %d %v", n, err)
	}
}

// Proves R20.
func TestClientAuthRotation(t *testing.T) {
	up := newUpstream(t, "up")
	dir := t.TempDir()
	write := func(name, v string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("key-a", "alpha\n")
	write("..data", "not a key")
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "up", Kind: routingv1.KindInferenceService, URL: up.URL}},
		DefaultRoute: "up",
	}, func(o *Options) { o.APIKeysDir = dir })
	status := func(auth string) int {
		return do(p, "POST", "/v1/chat/completions", `{"model":"m"}`, http.Header{"Authorization": {auth}}).Code
	}
	if s := status("Bearer alpha"); s != 200 {
		t.Errorf("valid key: %d", s)
	}
	for _, bad := range []string{"", "Bearer", "Bearer alph", "alpha", "Bearer not a key", "Basic alpha"} {
		if s := status(bad); s != 401 {
			t.Errorf("%q: %d", bad, s)
		}
	}
	if up.last.Load().Header.Get("Authorization") != "" {
		t.Error("the client's key reached the backend")
	}
	if s := do(p, "GET", "/healthz", "", nil).Code; s != 200 {
		t.Errorf("probes need no key: %d", s)
	}
	write("key-a", "beta")
	if err := p.keys.reload(); err != nil {
		t.Fatal(err)
	}
	if status("Bearer alpha") != 401 || status("Bearer beta") != 200 {
		t.Error("a rotated key replaces the old one without a restart")
	}
}
