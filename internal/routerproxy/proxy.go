/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package routerproxy is the data plane of a ModelRouter: an OpenAI-compatible HTTP proxy that
// routes each request by the model of its JSON body, following the routing document the operator
// writes (api/routing/v1). cmd/router-proxy wires it to flags.
package routerproxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/limits"
)

// Options configure a Proxy.
type Options struct {
	// Document is the routing document at start; Reload replaces it.
	Document *routingv1.Document
	// Getenv reads the environment holding backends' credentials (documents of older
	// operators); os.Getenv in the binary.
	Getenv func(string) string
	// CredentialsDir holds each backend's mounted credentials Secret in a directory named after
	// the backend, reread every CredentialsRefresh (5 s when zero).
	CredentialsDir     string
	CredentialsRefresh time.Duration
	// APIKeysDir holds the keys clients must present; no client authentication when empty.
	APIKeysDir string
	// APIKeysRefresh is how often the keys are reread.
	APIKeysRefresh time.Duration
	// MaxBodyBytes bounds a request body (413 beyond).
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading a request body (against slow clients).
	BodyReadTimeout time.Duration
	// BodyMemoryBudget bounds the bytes of request bodies held at once (503 beyond);
	// DefaultBodyBudget of the Go memory limit when zero.
	BodyMemoryBudget int64
	// RequestTimeout bounds one attempt's wait for a whole non-streaming answer; StreamIdleTimeout
	// the wait for a stream's headers and between two of its reads. A rule's timeout replaces
	// both. Zero means 30 minutes and 5 minutes.
	RequestTimeout    time.Duration
	StreamIdleTimeout time.Duration
	// FailureThreshold failures in a row put a backend in Cooldown.
	FailureThreshold int
	Cooldown         time.Duration
	// ModelsCacheTTL is how long GET /v1/models keeps the backends' model lists; 30 s when zero.
	ModelsCacheTTL time.Duration
	// Log gets one line per request; Registerer the metrics.
	Log        *slog.Logger
	Registerer prometheus.Registerer
	// Transport sends to backends; a tuned http.Transport when nil.
	Transport http.RoundTripper
	// Balancer chooses among InferenceService backends' pods (balancing.go); every request goes
	// to the backends' URLs when nil.
	Balancer *Balancer
	// RedisPasswordFile holds the password of the limits' Redis when the document says it has one.
	RedisPasswordFile string
}

// Default wait limits (docs/router.md, "Timeouts"): a generation takes what it takes;
// these only catch a backend that stopped answering.
const (
	DefaultRequestTimeout    = 30 * time.Minute
	DefaultStreamIdleTimeout = 5 * time.Minute
)

// Proxy is the router's HTTP handler.
type Proxy struct {
	routes    atomic.Pointer[routes]
	keys      *keyring
	transport http.RoundTripper
	metrics   *metrics
	log       *slog.Logger
	o         Options
	ready     atomic.Bool
	bufs      sync.Pool
	balancer  *Balancer
	reloadMu  sync.Mutex
	budget    *bodyBudget
	clients   *clientMetrics
	limits    *limits.Metrics
}

// routes is one routing document made ready to serve. A reload swaps it whole: a request keeps
// the one it started with to its end, new requests take the new one.
type routes struct {
	doc      *routingv1.Document
	backends map[string]*backend
	// timeouts are the rules' timeouts by rule index, 0 when unset.
	timeouts []time.Duration
	models   *modelCatalog
	// teams are the named clients by their keys' names, and limiter where their limits are
	// counted (limiting.go); nil without clients or limits.
	teams   map[string]*routingv1.Client
	limiter *limits.Limiter
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
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.StreamIdleTimeout <= 0 {
		o.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if o.CredentialsRefresh <= 0 {
		o.CredentialsRefresh = 5 * time.Second
	}
	if o.ModelsCacheTTL <= 0 {
		o.ModelsCacheTTL = 30 * time.Second
	}
	p := &Proxy{transport: o.Transport, log: o.Log, o: o, balancer: o.Balancer}
	p.bufs.New = func() any { b := make([]byte, 32<<10); return &b }
	if p.transport == nil {
		p.transport = NewTransport()
	}
	p.limits = limits.NewMetrics(o.Registerer)
	rt, err := p.prepare(o.Document, nil)
	if err != nil {
		return nil, err
	}
	p.routes.Store(rt)
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
	p.metrics = newMetrics(o.Registerer)
	if o.BodyMemoryBudget <= 0 {
		o.BodyMemoryBudget = DefaultBodyBudget(debug.SetMemoryLimit(-1))
	}
	p.budget = &bodyBudget{size: o.BodyMemoryBudget}
	p.clients = newClientMetrics(o.Registerer, p.budget)
	return p, nil
}

// prepare makes doc ready to serve. A backend equal to one of old keeps old's (and its health).
func (p *Proxy) prepare(doc *routingv1.Document, old *routes) (*routes, error) {
	rt := &routes{doc: doc, backends: map[string]*backend{}, timeouts: make([]time.Duration, len(doc.Rules))}
	for _, b := range doc.Backends {
		if old != nil {
			if ob := old.backends[b.Name]; ob != nil && equalBackend(ob.def, b) {
				rt.backends[b.Name] = ob
				continue
			}
		}
		be, err := newBackend(b)
		if err != nil {
			return nil, err
		}
		c, err := p.credentialsOf(b)
		if err != nil {
			return nil, fmt.Errorf("backend %q: credentials: %w", b.Name, err)
		}
		be.creds.Store(c)
		if c.missing != "" {
			p.warnMissingKey(b.Name, c.missing)
		}
		rt.backends[b.Name] = be
	}
	for i := range doc.Rules {
		rt.timeouts[i] = doc.Rules[i].TimeoutDuration()
	}
	rt.models = newModelCatalog(rt, p.o.ModelsCacheTTL)
	p.prepareTeams(rt, old)
	return rt, nil
}

// Reload switches to doc for the requests that start from now on; requests in flight, streams
// included, finish on the routes they started with.
func (p *Proxy) Reload(doc *routingv1.Document) error {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	rt, err := p.prepare(doc, p.routes.Load())
	if err != nil {
		return err
	}
	if p.balancer != nil {
		p.balancer.reload(doc)
	}
	p.routes.Store(rt)
	return nil
}

// Document is the routing document new requests follow.
func (p *Proxy) Document() *routingv1.Document { return p.routes.Load().doc }

// NewTransport is the transport to backends: connections kept for reuse (many requests in flight
// to few hosts) and no transparent decompression (bytes pass as they are). It has no response
// header timeout: each attempt's wait is bounded by its own timer (attempt.go), which knows a
// stream from a non-streaming request and the rule's timeout.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// Run rereads the client keys and the backends' credentials until ctx ends.
func (p *Proxy) Run(ctx context.Context) {
	if p.o.CredentialsDir != "" {
		go p.watchCredentials(ctx)
	}
	if p.keys != nil {
		p.keys.watch(ctx, p.o.APIKeysRefresh, p.log)
	}
}

// SetReady makes /readyz answer 200 (true) or 503 (false, while draining).
func (p *Proxy) SetReady(ready bool) { p.ready.Store(ready) }

// endpoint is how the proxy serves one path.
type endpoint struct {
	method string
	// form: the body is multipart/form-data and the model its model field; else a JSON object
	// with a model key.
	form bool
	// hideUsage: a stream whose client did not ask for usage is sent asking for it when its
	// backend accepts that, and the usage-only chunk is kept from the client (chat and
	// completions; usage.go).
	hideUsage bool
	// generates: the endpoint generates text, whose output a token limit reserves also without
	// max_tokens (limiting.go).
	generates bool
}

// api is every path the proxy serves. A proxied path is routed by the model of its body; the
// others the proxy answers itself (models.go). docs/router.md lists them.
var api = map[string]endpoint{
	"/v1/chat/completions":     {method: http.MethodPost, hideUsage: true, generates: true},
	"/v1/completions":          {method: http.MethodPost, hideUsage: true, generates: true},
	"/v1/embeddings":           {method: http.MethodPost},
	"/v1/responses":            {method: http.MethodPost, generates: true},
	"/v1/audio/transcriptions": {method: http.MethodPost, form: true},
	"/v1/audio/translations":   {method: http.MethodPost, form: true},
	"/v1/audio/speech":         {method: http.MethodPost},
	"/v1/images/generations":   {method: http.MethodPost},
	"/v1/rerank":               {method: http.MethodPost},
	"/rerank":                  {method: http.MethodPost},
	"/v2/rerank":               {method: http.MethodPost},
	"/v1/score":                {method: http.MethodPost},
	"/score":                   {method: http.MethodPost},
	"/tokenize":                {method: http.MethodPost},
	"/detokenize":              {method: http.MethodPost},
	"/v1/models":               {method: http.MethodGet},
}

// modelPath is the prefix of GET /v1/models/{id}.
const modelPath = "/v1/models/"

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
	// key is the name of the client's key (its Secret data key), client the metrics label: the
	// name of the spec.clients entry owning key, or none.
	key    string
	client string
	// usage is what the answer said it cost; firstToken when a stream's first token passed;
	// chunks the stream's content values with text (the estimate when usage says nothing).
	usage      usage
	firstToken time.Time
	chunks     int64
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

	x := &exchange{start: time.Now(), id: requestID(r.Header.Get("X-Request-Id")), backend: noBackend, model: otherModel, client: noClient}
	w.Header().Set("X-Request-Id", x.id)
	defer p.finish(r, x)

	if e := p.admit(r, x); e != nil {
		p.fail(w, x, e, "")
		return
	}
	rt := p.routes.Load()
	switch {
	case r.URL.Path == "/v1/models":
		p.listModels(w, r, x, rt)
	case strings.HasPrefix(r.URL.Path, modelPath):
		p.getModel(w, r, x, rt, strings.TrimPrefix(r.URL.Path, modelPath))
	default:
		p.proxy(w, r, x, rt)
	}
}

// admit checks the path, the method and the client's key, and notes the key's name.
func (p *Proxy) admit(r *http.Request, x *exchange) *apiError {
	ep, ok := api[r.URL.Path]
	if !ok && strings.HasPrefix(r.URL.Path, modelPath) && len(r.URL.Path) > len(modelPath) {
		ep, ok = endpoint{method: http.MethodGet}, true
	}
	method := ep.method
	if !ok {
		return invalidRequest(http.StatusNotFound, "unknown_url", "", fmt.Sprintf("Unknown request URL: %s %s.", r.Method, r.URL.Path))
	}
	if r.Method != method {
		return invalidRequest(http.StatusMethodNotAllowed, "method_not_supported", "", fmt.Sprintf("Method %s is not allowed for %s; use %s.", r.Method, r.URL.Path, method))
	}
	if p.keys == nil {
		return nil
	}
	name, ok := p.keys.identify(r.Header)
	if !ok {
		return invalidRequest(http.StatusUnauthorized, "invalid_api_key", "", "Incorrect or missing API key: send Authorization: Bearer <key> (or api-key, or x-api-key) with a key of this router.")
	}
	x.key = name
	return nil
}

// fail is the one way the proxy answers an error itself: the exchange records it, the client gets
// it in OpenAI's shape. detail, when set, goes to the log line only.
func (p *Proxy) fail(w http.ResponseWriter, x *exchange, e *apiError, detail string) {
	x.status, x.errMsg = e.status, e.code
	if detail != "" {
		x.errMsg += ": " + detail
	}
	e.write(w)
}

// proxy reads the body, routes it, and sends it to the rule's backends in order until one answers.
func (p *Proxy) proxy(w http.ResponseWriter, r *http.Request, x *exchange, rt *routes) {
	if p.o.BodyReadTimeout > 0 {
		// Also bounds what net/http reads of a body the proxy refused before reading it.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(p.o.BodyReadTimeout))
	}
	hold, e := p.admitBody(w, r)
	if e != nil {
		p.fail(w, x, e, "")
		return
	}
	defer hold.release()
	body, e := p.readBody(w, r, hold)
	if e != nil {
		p.fail(w, x, e, "")
		return
	}
	ep := api[r.URL.Path]
	var rb requestBody
	if ep.form {
		rb, e = scanForm(body, r.Header.Get("Content-Type"))
	} else {
		rb, e = scanBody(body)
	}
	rb.generates = ep.generates
	if !ep.hideUsage || !rb.stream {
		rb.usageEdit = nil
	}
	if e != nil {
		p.fail(w, x, e, "")
		return
	}
	x.asked = rb.model
	if len(x.asked) > 256 {
		x.asked = x.asked[:256]
	}
	team := p.identifyTeam(rt, x)
	if e := mayUse(team, rb.model); e != nil {
		p.fail(w, x, e, "")
		return
	}
	match, ok := rt.doc.Route(rb.model)
	if !ok {
		p.fail(w, x, invalidRequest(http.StatusNotFound, "model_not_found", "model", fmt.Sprintf("The model %q does not exist on this router: no rule matches it and there is no default route.", rb.model)), "")
		return
	}
	if match.Pattern != "" {
		x.model = match.Pattern
	}
	plan := p.plan(rt, match.Backends, time.Now())
	if len(plan) == 0 {
		x.backend = match.Backends[0]
		p.fail(w, x, serverError(http.StatusServiceUnavailable, "backend_unavailable", fmt.Sprintf("The backend %q for model %q is not available: it did not resolve (see the ModelRouter's status).", match.Backends[0], rb.model)), "")
		return
	}
	verdict, ticket, e := p.admitTeam(w, rt, team, rb, x)
	if e != nil {
		p.fail(w, x, e, "")
		return
	}
	defer p.settleTeam(rt, ticket, rb, x)
	req := &upstreamRequest{r: r, body: body, hold: hold, rb: rb, limit: p.limit(rt, match.Rule, rb.stream), writeLimit: p.limit(rt, match.Rule, true), verdict: verdict}
	for i, b := range plan {
		x.backend = b.name
		if p.tryBackend(w, x, req, b, i == len(plan)-1) {
			return
		}
		p.metrics.fallbacks.WithLabelValues(b.name).Inc()
	}
}

// limit is how long an attempt waits: the rule's timeout, else the default for a stream (between
// reads) or a non-streaming answer (in all).
func (p *Proxy) limit(rt *routes, rule int, stream bool) time.Duration {
	if rule >= 0 && rt.timeouts[rule] > 0 {
		return rt.timeouts[rule]
	}
	if stream {
		return p.o.StreamIdleTimeout
	}
	return p.o.RequestTimeout
}

// plan is the backends to try, in order: those of names that resolved, without those cooling
// down, except that the last one that resolved is always kept (better a backend that may have
// recovered than no answer).
func (p *Proxy) plan(rt *routes, names []string, now time.Time) []*backend {
	var resolved []*backend
	for _, n := range names {
		if b := rt.backends[n]; b != nil {
			resolved = append(resolved, b)
		}
	}
	var out []*backend
	for i, b := range resolved {
		if b.health.Cooling(now) && i != len(resolved)-1 {
			p.metrics.fallbacks.WithLabelValues(b.name).Inc()
			continue
		}
		out = append(out, b)
	}
	return out
}

// finish writes the request's log line and metrics once.
func (p *Proxy) finish(r *http.Request, x *exchange) {
	if x.status == 0 {
		return
	}
	d := time.Since(x.start)
	code := strconv.Itoa(x.status)
	p.metrics.requests.WithLabelValues(x.backend, x.model, code, x.client).Inc()
	p.metrics.duration.WithLabelValues(x.backend).Observe(d.Seconds())
	if x.bytes > 0 {
		p.metrics.ttfb.WithLabelValues(x.backend).Observe(x.ttfb.Seconds())
	}
	p.metrics.observeTokens(x, time.Now())
	attrs := []slog.Attr{
		slog.String("id", x.id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("backend", x.backend), slog.String("model", x.asked), slog.String("modelLabel", x.model), slog.Int("status", x.status),
		slog.Float64("durationMs", float64(d.Microseconds())/1000), slog.Float64("ttfbMs", float64(x.ttfb.Microseconds())/1000),
		slog.Int64("bytes", x.bytes), slog.Int("attempts", x.attempts),
	}
	if x.client != noClient {
		attrs = append(attrs, slog.String("client", x.client))
	}
	if x.usage.ok {
		attrs = append(attrs, slog.Int64("inputTokens", x.usage.input), slog.Int64("outputTokens", x.usage.output))
	} else if x.chunks > 0 {
		attrs = append(attrs, slog.Int64("estimatedOutputTokens", x.chunks))
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
