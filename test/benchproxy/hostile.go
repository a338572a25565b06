/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// The hostile clients a shared proxy meets (docs/router.md, "One client cannot tie up the pod"):
// bodies that stall after a first megabyte, and clients that stop reading a long answer. The
// benchmark measures what they cost everyone else: the throughput of normal clients beside them,
// against the same clients alone, in the same run.

// HostileResult is the router-proxy's throughput for normal clients alone and beside N hostile
// clients of each kind, the median of the rounds, and what the process held meanwhile.
type HostileResult struct {
	N                             int
	Alone, SlowBodies, NonReading Throughput
	// RSS and goroutines of the router-proxy at the end of each hostile phase, before the hostile
	// clients were closed.
	SlowBodiesRSS, NonReadingRSS               uint64
	SlowBodiesGoroutines, NonReadingGoroutines int
	// Answered is how many slow-body clients got an answer (the body read timeout's 4xx) before
	// the phase ended.
	Answered int
}

// Hostile shapes: a slow body declares 32 MiB (the default --max-body-bytes) and sends its first
// MiB, the case that made the body buffer jump to the declared length; a non-reading client asks
// for a stream the upstream makes as long as it can be written.
const (
	slowBodyDeclared = 32 << 20
	slowBodySent     = 1<<20 + 64<<10 // past the first MiB, where the buffer used to jump to the declared length
)

// floodBody asks the fake upstream for an endless stream (upstream.go).
const floodBody = `{"model":"bench-model","stream":true,"bench_flood":true,"messages":[{"role":"user","content":"Write a very long story."}]}`

// hostile runs o.Rounds rounds of: normal clients alone, beside N slow bodies, beside N
// non-reading clients, on one router process, interleaved so that load drifts hit every phase.
func hostile(ctx context.Context, o Options, router *child, logf func(string, ...any)) (*HostileResult, error) {
	res := &HostileResult{N: o.Hostile}
	base := "http://" + router.addr
	var alone, slow, nonReading []Throughput
	for r := 0; r < o.Rounds; r++ {
		t, failed := throughput(ctx, base, o.Concurrency, o.Warmup, o.Duration)
		if failed > 0 {
			return nil, fmt.Errorf("alone: %d normal requests failed", failed)
		}
		alone = append(alone, t)
		logf("hostile round %d %-34s %8.0f req/s  p50 %v  p99 %v", r+1, "alone", t.RPS, t.P50, t.P99)

		conns, err := openSlowBodies(router.addr, o.Hostile)
		if err != nil {
			return nil, err
		}
		t, failed = throughput(ctx, base, o.Concurrency, o.Warmup, o.Duration)
		res.SlowBodiesRSS, _ = router.rss()
		res.SlowBodiesGoroutines = router.goroutines()
		res.Answered = answered(conns)
		closeAll(conns)
		if failed > 0 {
			return nil, fmt.Errorf("beside slow bodies: %d normal requests failed", failed)
		}
		slow = append(slow, t)
		logf("hostile round %d %-34s %8.0f req/s  p50 %v  p99 %v  (%d of %d answered, rss %s, %d goroutines)", r+1,
			fmt.Sprintf("beside %d slow bodies", o.Hostile), t.RPS, t.P50, t.P99, res.Answered, o.Hostile, mib(res.SlowBodiesRSS), res.SlowBodiesGoroutines)

		conns, err = openNonReading(router.addr, o.Hostile)
		if err != nil {
			return nil, err
		}
		t, failed = throughput(ctx, base, o.Concurrency, o.Warmup, o.Duration)
		res.NonReadingRSS, _ = router.rss()
		res.NonReadingGoroutines = router.goroutines()
		closeAll(conns)
		if failed > 0 {
			return nil, fmt.Errorf("beside non-reading clients: %d normal requests failed", failed)
		}
		nonReading = append(nonReading, t)
		logf("hostile round %d %-34s %8.0f req/s  p50 %v  p99 %v  (rss %s, %d goroutines)", r+1,
			fmt.Sprintf("beside %d non-reading clients", o.Hostile), t.RPS, t.P50, t.P99, mib(res.NonReadingRSS), res.NonReadingGoroutines)
	}
	res.Alone, res.SlowBodies, res.NonReading = median(alone), median(slow), median(nonReading)
	return res, nil
}

// openSlowBodies opens n connections that each declare a 32 MiB chat request, send its first MiB
// and then nothing.
func openSlowBodies(addr string, n int) ([]net.Conn, error) {
	head := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, slowBodyDeclared)
	first := payloadBody(slowBodySent, false)[:slowBodySent-1] // the start of a body that goes on
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns = append(conns, c)
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.WriteString(c, head); err != nil {
			closeAll(conns)
			return nil, err
		}
		if _, err := c.Write(first); err != nil {
			closeAll(conns)
			return nil, err
		}
	}
	return conns, nil
}

// openNonReading opens n connections that each ask for an endless stream and never read it; it
// returns once the upstream has had time to fill the sockets' buffers.
func openNonReading(addr string, n int) ([]net.Conn, error) {
	req := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(floodBody), floodBody)
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns = append(conns, c)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10) // a client that reads nothing has a small window to fill
		}
		if _, err := io.WriteString(c, req); err != nil {
			closeAll(conns)
			return nil, err
		}
	}
	time.Sleep(time.Second)
	return conns, nil
}

// answered counts the connections on which an HTTP response has arrived.
func answered(conns []net.Conn) int {
	n := 0
	buf := make([]byte, 16)
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if k, _ := c.Read(buf); k > 0 && strings.HasPrefix(string(buf[:k]), "HTTP/1.1 ") {
			n++
		}
	}
	return n
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		_ = c.Close()
	}
}
