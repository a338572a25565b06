/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package routerproxy is the data plane of a ModelRouter: an OpenAI-compatible HTTP proxy that
// routes each request by the model of its JSON body, following the routing document the operator
// writes (internal/routingdoc). cmd/router-proxy wires it to flags.
package routerproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routingdoc"
)

// Options configure a Proxy.
type Options struct {
	// Document is the routing document.
	Document *routingdoc.Document
	// Getenv reads the environment holding backends' credentials; os.Getenv in the binary.
	Getenv func(string) string
	// APIKeysDir holds the keys clients must present; no client authentication when empty.
	APIKeysDir string
	// APIKeysRefresh is how often the keys are reread.
	APIKeysRefresh time.Duration
	// MaxBodyBytes bounds a request body (413 beyond).
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading a request body (against slow clients).
	BodyReadTimeout time.Duration
	// ResponseHeaderTimeout bounds each attempt's wait for response headers; a stream's body has
	// no limit.
	ResponseHeaderTimeout time.Duration
	// FailureThreshold failures in a row put a backend in Cooldown.
	FailureThreshold int
	Cooldown         time.Duration
	// Log gets one line per request; Registerer the metrics.
	Log        *slog.Logger
	Registerer prometheus.Registerer
	// Transport sends to backends; a tuned http.Transport when nil.
	Transport http.RoundTripper
	// Balancer chooses among InferenceService backends' pods (balancing.go); every request goes
	// to the backends' URLs when nil.
	Balancer *Balancer
}

// Proxy is the router's HTTP handler.
type Proxy struct {
	doc       *routingdoc.Document
	backends  map[string]*backend
	models    []byte // the body of GET /v1/models
	keys      *keyring
	transport http.RoundTripper
	metrics   *metrics
	log       *slog.Logger
	o         Options
	ready     atomic.Bool
	bufs      sync.Pool
	balancer  *Balancer
}

// New prepares a proxy for a document. It fails on a document it cannot serve; that is the
// moment to stop, before any request is accepted.
func New(o Options) (*Proxy, error) {
	if o.Document == nil {
		return nil, errors.New("no routing document")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.FailureThreshold < 1 {
		o.FailureThreshold = 1
	}
	p := &Proxy{doc: o.Document, backends: map[string]*backend{}, transport: o.Transport, log: o.Log, o: o, balancer: o.Balancer}
	p.bufs.New = func() any { b := make([]byte, 32<<10); return &b }
	for _, b := range o.Document.Backends {
		be, err := newBackend(b, o.Getenv)
		if err != nil {
			return nil, err
		}
		if be.missingKey != "" {
			o.Log.Warn("backend has a credentials Secret without an API key: its requests go without one", "backend", b.Name, "env", be.missingKey)
		}
		p.backends[b.Name] = be
	}
	if p.transport == nil {
		p.transport = NewTransport(o.ResponseHeaderTimeout)
	}
	if o.APIKeysDir != "" {
		k, err := newKeyring(o.APIKeysDir)
		if err != nil {
			return nil, err
		}
		if k.count() == 0 {
			o.Log.Warn("the client API key Secret holds no key: every request is refused", "dir", o.APIKeysDir)
		}
		p.keys = k
	}
	p.models = p.modelList()
	p.metrics = newMetrics(o.Registerer)
	return p, nil
}

// NewTransport is the transport to backends: connections kept for reuse (many requests in flight
// to few hosts), no transparent decompression (bytes pass as they are), and a response-header
// timeout per attempt.
func NewTransport(responseHeaderTimeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: responseHeaderTimeout,
		DisableCompression:    true,
	}
}

// Run rereads the client keys until ctx ends.
func (p *Proxy) Run(ctx context.Context) {
	if p.keys != nil {
		p.keys.watch(ctx, p.o.APIKeysRefresh, p.log)
	}
}

// SetReady makes /readyz answer 200 (true) or 503 (false, while draining).
func (p *Proxy) SetReady(ready bool) { p.ready.Store(ready) }

// modelList is what a client can ask for: every exact model name of a rule with an available
// backend, in rule order. Prefix entries cannot be listed.
func (p *Proxy) modelList() []byte {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := []model{}
	seen := map[string]bool{}
	for _, r := range p.doc.Rules {
		available := slices.ContainsFunc(append([]string{r.Backend}, r.Fallbacks...), func(n string) bool { return p.backends[n] != nil })
		for _, m := range r.Models {
			if strings.HasSuffix(m, "*") || seen[m] || !available {
				continue
			}
			seen[m] = true
			data = append(data, model{ID: m, Object: "model", OwnedBy: r.Backend})
		}
	}
	out, _ := json.Marshal(map[string]any{"object": "list", "data": data})
	return out
}

// Paths the proxy serves.
var proxied = map[string]bool{"/v1/chat/completions": true, "/v1/completions": true, "/v1/embeddings": true}

// exchange is what one request's log line and metrics say.
type exchange struct {
	start    time.Time
	id       string
	backend  string
	model    string // the metrics label
	asked    string // the model the client asked for, cut to 256 bytes
	status   int
	ttfb     time.Duration
	bytes    int64
	attempts int
	errMsg   string
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		_, _ = io.WriteString(w, "ok")
		return
	case "/readyz":
		if !p.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
		return
	}

	x := &exchange{start: time.Now(), id: requestID(r.Header.Get("X-Request-Id")), backend: noBackend, model: otherModel}
	w.Header().Set("X-Request-Id", x.id)
	defer p.finish(r, x)

	if e := p.admit(r); e != nil {
		x.status, x.errMsg = e.status, e.code
		e.write(w)
		return
	}
	if r.URL.Path == "/v1/models" {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(p.models)))
		x.status, x.bytes = http.StatusOK, int64(len(p.models))
		_, _ = w.Write(p.models)
		return
	}
	p.proxy(w, r, x)
}

// admit checks the path, the method and the client's key.
func (p *Proxy) admit(r *http.Request) *apiError {
	method := http.MethodPost
	switch {
	case r.URL.Path == "/v1/models":
		method = http.MethodGet
	case !proxied[r.URL.Path]:
		return invalidRequest(http.StatusNotFound, "unknown_url", "", fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path))
	}
	if r.Method != method {
		return invalidRequest(http.StatusMethodNotAllowed, "method_not_supported", "", fmt.Sprintf("Method %s is not allowed for %s; use %s.", r.Method, r.URL.Path, method))
	}
	if p.keys != nil && !p.keys.allowed(r.Header.Get("Authorization")) {
		return invalidRequest(http.StatusUnauthorized, "invalid_api_key", "", "Incorrect or missing API key: send Authorization: Bearer <key> with a key of this router.")
	}
	return nil
}

// proxy reads the body, routes it, and sends it to the rule's backends in order until one answers.
func (p *Proxy) proxy(w http.ResponseWriter, r *http.Request, x *exchange) {
	body, e := p.readBody(w, r)
	if e != nil {
		x.status, x.errMsg = e.status, e.code
		e.write(w)
		return
	}
	rb, e := scanBody(body)
	if e != nil {
		x.status, x.errMsg = e.status, e.code
		e.write(w)
		return
	}
	x.asked = rb.model
	if len(x.asked) > 256 {
		x.asked = x.asked[:256]
	}
	match, ok := p.doc.Route(rb.model)
	if !ok {
		e := invalidRequest(http.StatusNotFound, "model_not_found", "model", fmt.Sprintf("The model %q does not exist on this router: no rule matches it and there is no default route.", rb.model))
		x.status, x.errMsg = e.status, e.code
		e.write(w)
		return
	}
	if match.Pattern != "" {
		x.model = match.Pattern
	}
	plan := p.plan(match.Backends, time.Now())
	if len(plan) == 0 {
		x.backend = match.Backends[0]
		e := serverError(http.StatusServiceUnavailable, "backend_unavailable", fmt.Sprintf("The backend %q for model %q is not available: it did not resolve (see the ModelRouter's status).", match.Backends[0], rb.model))
		x.status, x.errMsg = e.status, e.code
		e.write(w)
		return
	}
	for i, b := range plan {
		last := i == len(plan)-1
		x.backend, x.attempts = b.name, i+1
		if done := p.tryBackend(w, r, x, b, body, rb, last); done {
			return
		}
		p.metrics.fallbacks.WithLabelValues(b.name).Inc()
	}
}

// plan is the backends to try, in order: those of names that resolved, without those cooling
// down, except that the last one is always kept.
func (p *Proxy) plan(names []string, now time.Time) []*backend {
	var out []*backend
	for i, n := range names {
		b := p.backends[n]
		if b == nil {
			continue
		}
		if b.health.cooling(now) && i != len(names)-1 {
			p.metrics.fallbacks.WithLabelValues(b.name).Inc()
			continue
		}
		out = append(out, b)
	}
	return out
}

func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	tooLarge := invalidRequest(http.StatusRequestEntityTooLarge, "request_too_large", "", fmt.Sprintf("The request body is larger than this router's limit of %d bytes.", p.o.MaxBodyBytes))
	if r.ContentLength > p.o.MaxBodyBytes {
		return nil, tooLarge
	}
	rc := http.NewResponseController(w)
	if p.o.BodyReadTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(p.o.BodyReadTimeout))
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + 1)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, p.o.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, tooLarge
	case err != nil:
		return nil, invalidRequest(http.StatusBadRequest, "invalid_body", "", "Reading the request body failed: "+err.Error())
	}
	return buf.Bytes(), nil
}

// attempt sends the request to b. It returns false when the next backend should be tried: b failed
// before anything reached the client and b is not the last option.
//
// pod, when not nil, is the pod of b the attempt goes to (tryBackend chose it).
func (p *Proxy) attempt(w http.ResponseWriter, r *http.Request, x *exchange, b *backend, pod *balance.Endpoint, body []byte, rb requestBody, last bool) bool {
	if b.modelJSON != nil {
		body = withModel(body, rb, b.modelJSON)
	}
	u := b.target(r.URL.Path, r.URL.RawQuery)
	if pod != nil {
		u.Host = pod.Addr
		pod.Acquire() // released when the response, a stream included, has ended
		defer pod.Release()
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		e := serverError(http.StatusInternalServerError, "internal_error", "Building the upstream request failed.")
		x.status, x.errMsg = e.status, e.code
		e.write(w)
		return true
	}
	copyHeaders(out.Header, r.Header, clientCredentials)
	out.Header.Del("Content-Length")
	out.Header.Set("X-Request-Id", x.id)
	if b.authHeader != "" {
		out.Header.Set(b.authHeader, b.authValue)
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // send none rather than Go's
	}

	inFlight := p.metrics.inFlight.WithLabelValues(b.name)
	inFlight.Inc()
	defer inFlight.Dec()
	resp, err := p.transport.RoundTrip(out)
	now := time.Now()
	if err != nil {
		if r.Context().Err() != nil {
			x.status, x.errMsg = 499, "client went away"
			return true
		}
		reason, status, code := reasonConnect, http.StatusBadGateway, "upstream_unreachable"
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			reason, status, code = reasonTimeout, http.StatusGatewayTimeout, "upstream_timeout"
		}
		p.failed(b, pod, now)
		p.metrics.upstreamErrors.WithLabelValues(b.name, reason).Inc()
		if !last {
			return false
		}
		e := serverError(status, code, fmt.Sprintf("The backend %q did not answer (%s).", b.name, reason))
		x.status, x.errMsg = e.status, e.code+": "+err.Error()
		e.write(w)
		return true
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		reason := reason5xx
		if resp.StatusCode == http.StatusTooManyRequests {
			reason = reason429
		}
		if resp.StatusCode >= 500 {
			p.failed(b, pod, now) // a pod answering 429 is busy, not broken
		} else if pod == nil {
			b.health.failed(now, p.o.FailureThreshold, p.o.Cooldown)
		}
		p.metrics.upstreamErrors.WithLabelValues(b.name, reason).Inc()
		if !last {
			_ = resp.Body.Close()
			return false
		}
	} else {
		p.succeeded(b, pod)
	}
	p.relay(w, r, x, b, resp, rb.stream)
	return true
}

// relay sends resp to the client as it arrives.
//
// Note: a stream is flushed after every read from the backend, so each chunk reaches the client
// when the backend sent it. A backend that breaks off mid-body aborts the client's connection
// (http.ErrAbortHandler) so the client sees an error, never a response that looks complete.
func (p *Proxy) relay(w http.ResponseWriter, r *http.Request, x *exchange, b *backend, resp *http.Response, streamRequested bool) {
	defer resp.Body.Close()
	h := w.Header()
	copyHeaders(h, resp.Header, nil)
	h.Set("X-Llmkube-Backend", b.name)
	h.Set("X-Request-Id", x.id)
	stream := streamRequested || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if stream {
		h.Set("X-Accel-Buffering", "no")
	}
	x.status = resp.StatusCode
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	if stream {
		_ = rc.Flush()
	}

	bp := p.bufs.Get().(*[]byte)
	defer p.bufs.Put(bp)
	buf := *bp
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if x.bytes == 0 {
				x.ttfb = time.Since(x.start)
			}
			x.bytes += int64(n)
			if _, werr := w.Write(buf[:n]); werr != nil {
				x.status, x.errMsg = 499, "client went away"
				return // closing the body cancels the backend's request
			}
			if stream {
				_ = rc.Flush()
			}
		}
		if rerr == io.EOF {
			return
		}
		if rerr != nil {
			if r.Context().Err() != nil {
				x.status, x.errMsg = 499, "client went away"
				return
			}
			p.metrics.upstreamErrors.WithLabelValues(b.name, reasonStream).Inc()
			b.health.failed(time.Now(), p.o.FailureThreshold, p.o.Cooldown)
			x.errMsg = "backend broke off the response: " + rerr.Error()
			p.finish(r, x)
			panic(http.ErrAbortHandler)
		}
	}
}

// finish writes the request's log line and metrics once.
func (p *Proxy) finish(r *http.Request, x *exchange) {
	if x.status == 0 {
		return
	}
	d := time.Since(x.start)
	code := strconv.Itoa(x.status)
	p.metrics.requests.WithLabelValues(x.backend, x.model, code).Inc()
	p.metrics.duration.WithLabelValues(x.backend).Observe(d.Seconds())
	if x.bytes > 0 {
		p.metrics.ttfb.WithLabelValues(x.backend).Observe(x.ttfb.Seconds())
	}
	attrs := []slog.Attr{
		slog.String("id", x.id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("backend", x.backend), slog.String("model", x.asked), slog.String("modelLabel", x.model), slog.Int("status", x.status),
		slog.Float64("durationMs", float64(d.Microseconds())/1000), slog.Float64("ttfbMs", float64(x.ttfb.Microseconds())/1000),
		slog.Int64("bytes", x.bytes), slog.Int("attempts", x.attempts),
	}
	if x.errMsg != "" {
		attrs = append(attrs, slog.String("error", x.errMsg))
	}
	p.log.LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
	x.status = 0
}

// requestID is the client's X-Request-Id when it is a sane token, else a new random one.
func requestID(given string) string {
	if n := len(given); n > 0 && n <= 128 && strings.IndexFunc(given, func(c rune) bool {
		return c <= ' ' || c > '~'
	}) < 0 {
		return given
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
