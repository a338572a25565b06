/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const requestBody = `{"model":"bench-model","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Write one sentence about a fox and a dog, please, in plain English."}],"temperature":0.2,"max_tokens":64}`

const streamBody = `{"model":"bench-model","stream":true,"messages":[{"role":"user","content":"Write one sentence about a fox."}]}`

func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: 0, DisableCompression: true}}
}

// throughput runs concurrency workers sending non-streaming chat completions to base for
// warmup+duration; only requests that start after the warm-up count.
func throughput(ctx context.Context, base string, concurrency int, warmup, duration time.Duration) (Throughput, int) {
	return throughputWith(ctx, newClient(concurrency), base, concurrency, warmup, duration)
}

// throughputWith is throughput with client's connections (and headers).
func throughputWith(ctx context.Context, client *http.Client, base string, concurrency int, warmup, duration time.Duration) (Throughput, int) {
	defer client.CloseIdleConnections()
	start := time.Now()
	measureFrom, end := start.Add(warmup), start.Add(warmup+duration)
	var failed atomic.Int64
	lat := make([][]time.Duration, concurrency)
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				t0 := time.Now()
				if t0.After(end) {
					return
				}
				if err := post(ctx, client, base+"/v1/chat/completions", requestBody); err != nil {
					failed.Add(1)
					continue
				}
				if t0.After(measureFrom) {
					lat[w] = append(lat[w], time.Since(t0))
				}
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(lat...)
	return Throughput{RPS: float64(len(all)) / duration.Seconds(), P50: percentile(all, 50), P99: percentile(all, 99), Requests: len(all)}, int(failed.Load())
}

func post(ctx context.Context, client *http.Client, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// ttfbClient is shared by the sequential samples, so a sample reuses a warm connection as a real
// client would.
var ttfbClient = newClient(4)

// ttfb is the time from sending a streaming request to the first byte of its body.
func ttfb(ctx context.Context, base string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(streamBody))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := ttfbClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var b [1]byte
	if _, err := io.ReadFull(resp.Body, b[:]); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	_, err = io.Copy(io.Discard, resp.Body)
	return d, err
}

// streamsRSS opens n streams through base at once, waits until each has its first chunk while
// the upstream holds the rest, reads the proxy's RSS, then lets them finish.
func streamsRSS(ctx context.Context, up *upstream, base string, proxy *child, n int) (uint64, int, error) {
	release := up.holdStreams()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	client := newClient(n)
	defer client.CloseIdleConnections()
	var first, failed atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(streamBody))
			resp, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				first.Add(1)
				return
			}
			defer resp.Body.Close()
			var b [1]byte
			_, err = io.ReadFull(resp.Body, b[:])
			first.Add(1)
			if err != nil {
				failed.Add(1)
				return
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				failed.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	for first.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	rss, err := proxy.rss()
	release()
	released = true
	wg.Wait()
	if first.Load() < int64(n) {
		return rss, int(failed.Load()), errors.New("not every stream got its first chunk within 60s")
	}
	return rss, int(failed.Load()), err
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}

func median(ts []Throughput) Throughput {
	s := slices.Clone(ts)
	slices.SortFunc(s, func(a, b Throughput) int {
		switch {
		case a.RPS < b.RPS:
			return -1
		case a.RPS > b.RPS:
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}
