/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Proves R25: a body that stalls gets 408 and its connection closes, not held by net/http's drain.
func TestStalledBodyIsAnsweredAndClosed(t *testing.T) {
	up := newUpstream(t, "up")
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "up", Kind: routingv1.KindExternal, URL: up.URL + "/v1"}},
		DefaultRoute: "up",
	}, func(o *Options) { o.MaxBodyBytes = 1 << 20; o.BodyReadTimeout = 300 * time.Millisecond })
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	for _, head := range []string{"Transfer-Encoding: chunked\r\n\r\n10\r\n", "Content-Length: 65536\r\n\r\n"} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\n%s{\"model\":\"m\",\"x\"", head)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: no answer: %v", head, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
			t.Fatalf("%q: %d close=%v", head, resp.StatusCode, resp.Close)
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("%q: the connection was kept: %v", head, err)
		}
	}
}

// Proves R24: a client that stops reading ends its request within the write limit.
func TestClientThatStopsReadingEndsTheRequest(t *testing.T) {
	chunk := "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", 16<<10) + "\"}}]}\n\n"
	canceled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for {
			if _, err := io.WriteString(w, chunk); err != nil || rc.Flush() != nil {
				close(canceled)
				return
			}
		}
	}))
	t.Cleanup(up.Close)
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "up", Kind: routingv1.KindExternal, URL: up.URL + "/v1"}},
		DefaultRoute: "up",
	}, func(o *Options) { o.StreamIdleTimeout = 500 * time.Millisecond })
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	inFlight := p.metrics.inFlight.WithLabelValues("up")
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(inFlight) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request of a client that stopped reading is still in flight")
		}
		time.Sleep(20 * time.Millisecond)
	}
	<-canceled
	if n := testutil.ToFloat64(p.clients.timeouts.WithLabelValues(phaseResponse)); n != 1 {
		t.Fatalf("client timeouts: %v", n)
	}
}

// Proves R24: the write deadline of one answer (it also bounds net/http's final flush) does not
// outlive it on a kept-alive connection: net/http clears it after the answer.
func TestWriteDeadlineDoesNotReachTheNextRequest(t *testing.T) {
	up := newUpstream(t, "up")
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "up", Kind: routingv1.KindExternal, URL: up.URL + "/v1"}},
		DefaultRoute: "up",
	}, func(o *Options) { o.StreamIdleTimeout = 200 * time.Millisecond })
	srv := httptest.NewUnstartedServer(p)
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	for i := range 2 {
		resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !strings.Contains(string(b), "served_by") {
			t.Fatalf("request %d: %d %s %v", i, resp.StatusCode, b, err)
		}
		time.Sleep(400 * time.Millisecond) // past the first answer's write deadline
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections: the second request did not reuse the first's", n)
	}
}
