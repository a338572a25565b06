/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/procfs"
)

// BodyCPU is the CPU a hop process spends per MiB of request body it forwards, for a JSON chat
// request and for a multipart transcription upload of the same size: what routing by the body's
// model costs beyond moving its bytes.
type BodyCPU struct {
	// PerMiB by body kind ("json", "multipart") and mode (PlainHop, Router).
	PerMiB map[string]map[Mode]time.Duration
	// Requests of Size bytes per kind and mode.
	Requests, Size int
}

// cpuTime is the CPU (user plus system) pid has used so far; zero when it cannot be read.
func cpuTime(pid int) time.Duration {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

// bodyCPU sends requests bodies of size bytes of each kind through each hop, four at a time, and
// divides each hop process's CPU by the MiB it forwarded. /proc's 10 ms resolution is far below
// what 4 MiB bodies cost.
func bodyCPU(ctx context.Context, hops map[Mode]*child, requests, size int) (BodyCPU, error) {
	res := BodyCPU{PerMiB: map[string]map[Mode]time.Duration{}, Requests: requests, Size: size}
	upload, uploadType := uploadBody(size)
	kinds := []struct {
		name, path, contentType string
		body                    []byte
	}{
		{"json", "/v1/chat/completions", "application/json", payloadBody(size, false)},
		{"multipart", "/v1/audio/transcriptions", uploadType, upload},
	}
	for _, k := range kinds {
		res.PerMiB[k.name] = map[Mode]time.Duration{}
		for _, m := range []Mode{PlainHop, Router} {
			c := hops[m]
			before := cpuTime(c.cmd.Process.Pid)
			if err := sendAll(ctx, "http://"+c.addr+k.path, k.contentType, k.body, requests); err != nil {
				return res, err
			}
			spent := cpuTime(c.cmd.Process.Pid) - before
			res.PerMiB[k.name][m] = time.Duration(float64(spent) / (float64(requests*len(k.body)) / (1 << 20)))
		}
	}
	return res, nil
}

// sendAll posts body to url n times, four at a time, and fails on any answer but 200.
func sendAll(ctx context.Context, url, contentType string, body []byte, n int) error {
	client := newClient(4)
	defer client.CloseIdleConnections()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", contentType)
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		return errors.New("a body-CPU request failed")
	}
	return nil
}
