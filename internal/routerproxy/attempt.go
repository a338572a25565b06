/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/limits"
)

// upstreamRequest is one client request on its way to the backends: read once, sent as often as
// attempts need.
type upstreamRequest struct {
	r    *http.Request
	body []byte
	// hold is body's room in the body budget, given back when body is let go of.
	hold *bodyHold
	rb   requestBody
	// limit is each attempt's wait: for a non-streaming request its whole answer, for a stream its
	// headers and each gap between two reads (Proxy.limit).
	limit time.Duration
	// writeLimit is how long one write to the client may make no progress (the rule's timeout,
	// else the stream idle limit): a client that stopped reading ends the request.
	writeLimit time.Duration
	// tried are the pods of the current backend this request failed on.
	tried []*balance.Endpoint
	// verdict is the client's limits state: its rate-limit headers replace the backend's.
	verdict *limits.Verdict
}

// parts is the body an attempt at b sends: with b's model, and asking for a stream's usage when
// the client did not and the routing document says b accepts the field.
func (req *upstreamRequest) parts(b *backend) [][]byte {
	model := b.modelJSON
	if req.rb.form && b.modelJSON != nil {
		model = []byte(b.def.Model)
	}
	return bodyParts(req.body, req.rb, model, b.def.StreamUsage)
}

// failure is what went wrong with an attempt, as judge reads it.
type failure int

const (
	answered    failure = iota // the backend answered (2xx to 4xx but 429): relayed as it is
	unreachable                // no connection, or it broke before the response headers
	status5xx                  // a 5xx answer
	busy                       // a 429 answer
	timedOut                   // no answer within the attempt's limit
	clientGone                 // the client went away first
)

// errTimedOut is the cause of an attempt's context when its limit passed.
var errTimedOut = errors.New("the backend did not answer within the timeout")

// verdict is what one failed attempt means.
type verdict struct {
	// podFailed and backendFailed count toward a pod's ejection or a backend's cooldown.
	podFailed, backendFailed bool
	// otherPod: another pod of the same backend may take the request; otherBackend: the rule's
	// next backend may.
	otherPod, otherBackend bool
}

// judge is the one place that decides what a failed attempt means.
//
//   - A connection error or a 5xx is the pod's (or the backend's) failure: another pod, then the
//     rule's next backend, takes the request.
//   - A 429 is a busy pod, not a broken one: another pod or backend takes the request; only a
//     backend without pods (an external API) counts it toward its cooldown.
//   - A timeout is no one's failure (a long generation is not a broken pod) and is not retried
//     on the same backend, which would run the same generation again: only the rule's next
//     backend, when there is one, takes the request.
//
// onPod says whether the attempt went to a pod the proxy chose.
func judge(f failure, onPod bool) verdict {
	switch f {
	case unreachable, status5xx:
		return verdict{podFailed: onPod, backendFailed: !onPod, otherPod: onPod, otherBackend: true}
	case busy:
		return verdict{backendFailed: !onPod, otherPod: onPod, otherBackend: true}
	case timedOut:
		return verdict{otherBackend: true}
	}
	return verdict{}
}

// reasons are the metric labels of failures.
var reasons = map[failure]string{unreachable: reasonConnect, status5xx: reason5xx, busy: reason429, timedOut: reasonTimeout}

// record feeds an attempt's outcome to the health of the pod it went to, else of its backend,
// and to the metrics.
func (p *Proxy) record(b *backend, pod *balance.Endpoint, f failure) {
	p.recordHealth(b, pod, f)
	if reason, ok := reasons[f]; ok {
		p.metrics.upstreamErrors.WithLabelValues(b.name, reason).Inc()
	}
}

func (p *Proxy) recordHealth(b *backend, pod *balance.Endpoint, f failure) {
	now := time.Now()
	v := judge(f, pod != nil)
	switch {
	case f == answered && pod != nil:
		pod.Health().Succeeded()
	case f == answered:
		b.health.Succeeded()
	case v.podFailed:
		if p.balancer.podFailed(b.name, pod, now) {
			p.log.Warn("pod ejected after failing in a row", "backend", b.name, "pod", pod.Addr, "cooldown", p.o.Cooldown.String())
		}
	case v.backendFailed:
		b.health.Failed(now, p.o.FailureThreshold, p.o.Cooldown)
	}
}

// outcome is one attempt's result. Its end releases what the attempt holds (the pod's count,
// the timer, the connection).
type outcome struct {
	failure failure
	resp    *http.Response
	err     error
	ctx     context.Context
	timer   *time.Timer
	cancel  context.CancelCauseFunc
	release func()
	// firstByte ends the pod's count of the prompt's prefill (first token seen).
	firstByte func()
	ended     bool
}

// end closes the response, draining a bounded amount of it first so that its connection goes
// back to the pool instead of being closed (a fallback storm would otherwise open a connection,
// and a TLS handshake, per request), and releases the rest.
func (o *outcome) end() {
	if o.ended {
		return
	}
	o.ended = true
	if o.resp != nil {
		o.timer.Reset(drainTimeout)
		_, _ = io.CopyN(io.Discard, o.resp.Body, drainBytes)
		_ = o.resp.Body.Close()
	}
	o.timer.Stop()
	o.cancel(nil)
	o.release()
}

// What end drains of a response the client does not get.
const (
	drainBytes   = 256 << 10
	drainTimeout = 2 * time.Second
)

// attempt sends req to b (to pod when not nil) and waits for the response headers. work is the
// prompt's blocks the pod was not sent before: they count against it until its first byte
// (balance.StartPrefill).
func (p *Proxy) attempt(x *exchange, req *upstreamRequest, b *backend, pod *balance.Endpoint, work int) *outcome {
	x.attempts++
	ctx, cancel := context.WithCancelCause(req.r.Context())
	o := &outcome{ctx: ctx, cancel: cancel, release: func() {}}
	o.timer = time.AfterFunc(req.limit, func() { cancel(errTimedOut) })
	u := b.target(req.r.URL.Path, req.r.URL.RawQuery)
	if pod != nil {
		u.Host = pod.Addr
		pod.Acquire() // released when the response, a stream included, has ended
		prefill := pod.StartPrefill(work)
		o.release = func() { prefill.Done(); pod.Release() }
		o.firstByte = prefill.Done
	}
	inFlight := p.metrics.inFlight.WithLabelValues(b.name)
	inFlight.Inc()
	release := o.release
	o.release = func() { inFlight.Dec(); release() }

	var length int64
	for _, part := range req.parts(b) {
		length += int64(len(part))
	}
	out, err := http.NewRequestWithContext(ctx, req.r.Method, u.String(), &partsReader{parts: req.parts(b)})
	if err != nil {
		o.failure, o.err = unreachable, err
		return o
	}
	out.ContentLength = length
	// The transport may send the body again (a connection it reused was closed); relay lets go of
	// the body once the response is on its way, and a resend after that sends nothing.
	out.GetBody = func() (io.ReadCloser, error) {
		return &partsReader{parts: req.parts(b)}, nil
	}
	requestHeaders(out.Header, req.r.Header, b)
	out.Header.Set("X-Request-Id", x.id)
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // send none rather than Go's
	}

	resp, err := p.transport.RoundTrip(out)
	switch {
	case err != nil && req.r.Context().Err() != nil:
		o.failure, o.err = clientGone, err
	case err != nil && context.Cause(ctx) == errTimedOut:
		o.failure, o.err = timedOut, err
	case err != nil:
		o.failure, o.err = unreachable, err
	case resp.StatusCode == http.StatusTooManyRequests:
		o.failure, o.resp = busy, resp
	case resp.StatusCode >= 500:
		o.failure, o.resp = status5xx, resp
	default:
		o.failure, o.resp = answered, resp
	}
	if o.resp != nil && o.firstByte != nil {
		o.resp.Body = &firstByteReader{ReadCloser: o.resp.Body, first: o.firstByte}
	}
	return o
}

// step is what settle tells the caller to do next.
type step int

const (
	done        step = iota // the client has its answer (or went away)
	nextPod                 // try another pod of the same backend
	nextBackend             // try the rule's next backend
)

// settle records an attempt's outcome and either answers the client (relaying the response, or
// the one error this attempt ends with) or says where the request goes next. lastBackend says
// no backend follows b; morePods that another pod of b could be tried.
func (p *Proxy) settle(w http.ResponseWriter, x *exchange, req *upstreamRequest, b *backend, pod *balance.Endpoint, o *outcome, lastBackend, morePods bool) step {
	if o.failure == clientGone {
		x.status, x.errMsg = 499, "client went away"
		o.end()
		return done
	}
	p.record(b, pod, o.failure)
	if o.failure == answered {
		p.relay(w, x, req, b, pod, o)
		return done
	}
	v := judge(o.failure, pod != nil)
	switch {
	case v.otherPod && morePods:
		o.end()
		return nextPod
	case v.otherBackend && !lastBackend:
		o.end()
		return nextBackend
	case o.resp != nil: // the last option's 5xx or 429 answer goes to the client as it is
		p.relay(w, x, req, b, pod, o)
		return done
	}
	o.end()
	status, code := http.StatusBadGateway, "upstream_unreachable"
	if o.failure == timedOut {
		status, code = http.StatusGatewayTimeout, "upstream_timeout"
	}
	p.fail(w, x, serverError(status, code, fmt.Sprintf("The backend %q did not answer (%s).", b.name, reasons[o.failure])), errorText(o.err))
	return done
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// relay sends o's response to the client as it arrives.
//
// Note: a stream, and any answer sent without a Content-Length (streamed), is flushed after
// every read from the backend, so each chunk reaches the client when the backend sent it. Each
// read of a stream restarts its idle limit; a non-streaming request keeps its limit for the
// whole body. A backend that breaks off mid-body (or passes its limit) aborts
// the client's connection (http.ErrAbortHandler) so the client sees an error, never a response
// that looks complete.
func (p *Proxy) relay(w http.ResponseWriter, x *exchange, req *upstreamRequest, b *backend, pod *balance.Endpoint, o *outcome) {
	resp := o.resp
	defer o.end()
	// No other attempt follows: the request body is no longer needed (a long stream would
	// otherwise hold its prompt to its end).
	req.body = nil
	req.hold.release()
	h := w.Header()
	responseHeaders(h, resp.Header, b)
	if req.verdict != nil {
		req.verdict.WriteHeaders(h) // the client's own limits, not the backend's
	}
	h.Set("X-Llmkube-Backend", b.name)
	h.Set("X-Request-Id", x.id)
	stream := req.rb.stream || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	flush := stream || streamed(resp)
	if flush {
		h.Set("X-Accel-Buffering", "no")
	}
	// m reads the usage and the first token as the answer passes (usage.go). A compressed answer
	// (an upstream that compressed although asked for identity) passes as it is, unread, with the
	// usage chunk the proxy asked for: hiding it would mean decompressing and compressing again.
	m := &meter{stream: stream, blind: encoded(resp.Header)}
	m.hide = stream && req.rb.usageEdit != nil && b.def.StreamUsage && !m.blind
	if m.hide {
		h.Del("Content-Length") // the client gets fewer bytes than the upstream sent
	}
	defer func() { x.usage, x.firstToken, x.chunks = m.usage, m.firstToken, m.chunks }()
	x.status = resp.StatusCode
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	if flush {
		_ = rc.Flush()
	}

	// Each write gets its own deadline: a client that reads slowly is served, one that stopped
	// reading (whose socket buffers are full) is not waited for past writeLimit.
	var deadline time.Time
	emit := func(b []byte) error {
		if x.bytes == 0 {
			x.ttfb = time.Since(x.start)
		}
		x.bytes += int64(len(b))
		deadline = time.Now().Add(req.writeLimit)
		_ = rc.SetWriteDeadline(deadline)
		if _, err := w.Write(b); err != nil {
			return err
		}
		if flush {
			return rc.Flush()
		}
		return nil
	}
	gone := func(err error) {
		x.status, x.errMsg = 499, "client went away"
		if errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(deadline) {
			x.errMsg = "client stopped reading: no write progress for " + req.writeLimit.String()
			p.clients.timeouts.WithLabelValues(phaseResponse).Inc()
		}
		o.resp = nil // nothing to drain: the backend's request is canceled
	}

	bp := p.bufs.Get().(*[]byte)
	defer p.bufs.Put(bp)
	buf := *bp
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if stream {
				o.timer.Stop() // the idle limit is the backend's; a slow client's write is not
			}
			if err := m.write(buf[:n], emit); err != nil {
				gone(err)
				return
			}
			if stream {
				o.timer.Reset(req.limit)
			}
		}
		if rerr == io.EOF {
			if err := m.flush(emit); err != nil {
				gone(err)
			}
			return
		}
		if rerr != nil {
			o.resp = nil
			_ = resp.Body.Close()
			switch {
			case req.r.Context().Err() != nil:
				x.status, x.errMsg = 499, "client went away"
				return
			case context.Cause(o.ctx) == errTimedOut:
				p.record(b, pod, timedOut)
				x.errMsg = "backend passed its timeout mid-response: " + rerr.Error()
			default:
				p.recordHealth(b, pod, unreachable)
				p.metrics.upstreamErrors.WithLabelValues(b.name, reasonStream).Inc()
				x.errMsg = "backend broke off the response: " + rerr.Error()
			}
			p.finish(req.r, x)
			panic(http.ErrAbortHandler)
		}
	}
}

// streamed says the backend sends the body as it makes it: no length announced (chunked, or
// until the connection closes), as speech audio, ndjson or any stream without SSE arrives. Such
// an answer is flushed after every read like an SSE stream, or its first bytes would wait in
// the server's write buffer for the rest; an answer of known length is one write anyway.
func streamed(resp *http.Response) bool { return resp.ContentLength < 0 }
