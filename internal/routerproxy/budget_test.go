/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Proves R26: the buffer doubles with what arrived, capped by the declared length and the limit,
// and goes to the declared length at once when that is at most four times what arrived.
func TestBodyBufferFollowsWhatArrived(t *testing.T) {
	const limit = 32 << 20
	sizes := []int64{firstBodyBuffer}
	for c := int64(firstBodyBuffer); c <= 32<<20; {
		c = nextBodyBuffer(c, 32<<20, limit)
		sizes = append(sizes, c)
		if c == 32<<20 {
			break
		}
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] > 2*sizes[i-1] && (sizes[i] != 32<<20 || sizes[i] > 4*sizes[i-1]) {
			t.Fatalf("grew from %d to %d: more than double what arrived, and not to the declared length within four times it", sizes[i-1], sizes[i])
		}
	}
	if got := nextBodyBuffer(1<<20, 4<<20, limit); got != 4<<20 {
		t.Fatalf("1 MiB arrived of a declared 4 MiB: grew to %d, want the declared 4 MiB at once", got)
	}
	if last := sizes[len(sizes)-1]; last != 32<<20 {
		t.Fatalf("a declared 32 MiB body ends in a buffer of %d", last)
	}
	if got := nextBodyBuffer(1<<20, 32<<20, limit); got != 2<<20 {
		t.Fatalf("1 MiB arrived of a declared 32 MiB: grew to %d, want 2 MiB", got)
	}
	if got := nextBodyBuffer(4<<20, 5<<20, limit); got != 5<<20 {
		t.Fatalf("capped by the declared length: %d", got)
	}
	if got := nextBodyBuffer(32<<20, -1, limit); got != limit+1 {
		t.Fatalf("capped by the limit: %d", got)
	}
}

// Proves R27: the sizing of the default budget.
func TestDefaultBodyBudget(t *testing.T) {
	mib := int64(1 << 20)
	if got := DefaultBodyBudget(268435456 / 10 * 9); got != (241591905-40*mib)/2 {
		t.Fatalf("256Mi: %d", got)
	}
	if got := DefaultBodyBudget(math.MaxInt64); got != NoLimitBodyBudget {
		t.Fatalf("no limit: %d", got)
	}
	if got := DefaultBodyBudget(32 * mib); got != mib {
		t.Fatalf("a limit below the base: %d", got)
	}
}

// Proves R27: a body is admitted before it is read, refused with 503 and Retry-After when the
// bodies in flight fill the budget, and its room is given back when the request ends.
func TestBodyBudgetAdmission(t *testing.T) {
	up := newUpstream(t, "up")
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "up", Kind: routingv1.KindExternal, URL: up.URL + "/v1"}},
		DefaultRoute: "up",
	}, func(o *Options) { o.MaxBodyBytes = 1 << 20; o.BodyMemoryBudget = 100 << 10 })
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 60<<10) + `"}]}`
	if w := do(p, http.MethodPost, "/v1/chat/completions", body, nil); w.Code != 200 {
		t.Fatalf("a body within the budget: %d %s", w.Code, w.Body)
	}
	if h := p.budget.held.Load(); h != 0 {
		t.Fatalf("%d bytes still held after the request", h)
	}
	p.budget.take(50 << 10) // another request's body
	w := do(p, http.MethodPost, "/v1/chat/completions", body, nil)
	if w.Code != http.StatusServiceUnavailable || errorCode(t, w) != "server_overloaded" || w.Header().Get("Retry-After") != bodyRetryAfter {
		t.Fatalf("beyond the budget: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if up.hits.Load() != 1 {
		t.Fatal("a refused body reached the backend")
	}
	w = do(p, http.MethodPost, "/v1/chat/completions", strings.Repeat(" ", 200<<10), nil)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body larger than the whole budget: %d", w.Code)
	}
	if h := p.budget.held.Load(); h != 50<<10 {
		t.Fatalf("held %d, want only the other request's", h)
	}
}

// Proves R27. Three connections declare bodies that together fill the budget and send 5 bytes:
// they hold no room a small request needs, so another client's chat is answered at once; a
// larger body still waits for the declared lengths (503 with Retry-After).
func TestDeclaredLengthsLockNoSmallRequestOut(t *testing.T) {
	up := newUpstream(t, "up")
	const declared = 32 << 20
	p, _ := newProxy(t, routingv1.Document{
		Backends:     []routingv1.Backend{{Name: "up", Kind: routingv1.KindExternal, URL: up.URL + "/v1"}},
		DefaultRoute: "up",
	}, func(o *Options) {
		o.MaxBodyBytes, o.BodyMemoryBudget, o.BodyReadTimeout = 64<<20, 3*(declared+1), time.Minute
	})
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	for range 3 {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"mod", declared)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.budget.held.Load() < 3*(declared+1) {
		if time.Now().After(deadline) {
			t.Fatalf("the three declared bodies hold %d of the budget, want all of it", p.budget.held.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	chat := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 100) + `"}]}`
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(chat))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a %d-byte chat behind three connections that declared %d bytes each and sent 5: %d, want 200", len(chat), declared, res.StatusCode)
	}
	large := strings.Repeat(" ", 1<<20) + chat
	res, err = http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(large))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != bodyRetryAfter {
		t.Fatalf("a 1 MiB body behind the declared lengths: %d, want 503 with Retry-After", res.StatusCode)
	}
}

// Proves R27. The small bodies a declared length does not hold back never take the budget past
// its size: a large body's buffer waits to grow until they let go of theirs.
func TestALargeBodyWaitsForTheRoomSmallBodiesHold(t *testing.T) {
	b := &bodyBudget{size: 200 << 10}
	wait := make(chan struct{})
	large := &bodyHold{b: b, wait: wait}
	if !b.reserve(&b.held, 200<<10) {
		t.Fatal("the declared length did not fit")
	}
	large.n = 200 << 10
	if !large.cover(firstBodyBuffer) || !b.take(100<<10) { // a small body's buffer beside it
		t.Fatal("refused within the budget")
	}
	grown := make(chan bool)
	go func() { grown <- large.cover(128 << 10) }()
	select {
	case <-grown:
		t.Fatalf("the large body grew to 128 KiB beside 100 KiB of small bodies: %d real bytes of a budget of %d", b.real.Load(), b.size)
	case <-time.After(100 * time.Millisecond):
	}
	b.give(100 << 10)
	if !<-grown || b.real.Load() != 128<<10 {
		t.Fatalf("once the small body let go: %d real bytes, want the large body's 128 KiB", b.real.Load())
	}
	close(wait)
	if large.cover(256 << 10) {
		t.Fatal("grew past its declared length beyond the budget")
	}
}

// Proves R26: a body of a declared length ends in a buffer of exactly that length, whatever its
// size (a power of two no longer grows once more, by a copy of the whole body, to see its end).
func TestABodyEndsInABufferOfItsDeclaredLength(t *testing.T) {
	p, _ := newProxy(t, routingv1.Document{DefaultRoute: "up", Backends: []routingv1.Backend{{Name: "up", Kind: routingv1.KindExternal, URL: "http://127.0.0.1:1/v1"}}},
		func(o *Options) { o.MaxBodyBytes = 8 << 20; o.BodyMemoryBudget = 64 << 20 })
	for _, n := range []int{0, 100, firstBodyBuffer, 4 << 20, 4<<20 + 7} {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(strings.Repeat("x", n)))
		w := httptest.NewRecorder()
		hold, e := p.admitBody(w, r)
		if e != nil {
			t.Fatalf("%d bytes: %s", n, e.message)
		}
		body, e := p.readBody(w, r, hold)
		hold.release()
		if e != nil || len(body) != n || cap(body) != n {
			t.Fatalf("a body of %d bytes: read %d in a buffer of %d (%v), want exactly %d", n, len(body), cap(body), e, n)
		}
	}
}
