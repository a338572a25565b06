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
	"mime/multipart"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// UploadResult is the router-proxy's peak RSS while Requests audio uploads of Size bytes arrive
// at once (OpenAI's own file limit is 25 MB), on a fresh process with the benchmark's memory
// limit: how many it admitted (held at the upstream) and how many it refused with 503 before
// reading them.
type UploadResult struct {
	Requests, Size    int
	Admitted, Refused int
	Failed            int
	Peak              uint64
	// MemoryLimit is the container limit the router's GOMEMLIMIT came from (0: none).
	MemoryLimit int64
}

// uploadBody is a transcription request: the model field and a file part of size bytes of
// audio-like noise.
func uploadBody(size int) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.WriteField("model", "bench-model")
	f, _ := w.CreateFormFile("file", "meeting.wav")
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = byte(i*7 + i/251)
	}
	for written := 0; written < size; written += len(chunk) {
		_, _ = f.Write(chunk[:min(len(chunk), size-written)])
	}
	_ = w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// uploads sends n uploads of size bytes through proxy at once, holds every admitted one at the
// upstream until all are either there or refused, and reads the proxy's peak RSS meanwhile.
func uploads(ctx context.Context, up *upstream, proxy *child, n, size int) (UploadResult, error) {
	res := UploadResult{Requests: n, Size: size}
	resetPeak(proxy.cmd.Process.Pid)
	body, contentType := uploadBody(size)
	release := up.holdStreams()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	arrived := up.countArrivals()
	client := newClient(n)
	defer client.CloseIdleConnections()
	var refused, failed, ok atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+proxy.addr+"/v1/audio/transcriptions", bytes.NewReader(body))
			req.Header.Set("Content-Type", contentType)
			resp, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusServiceUnavailable, http.StatusTooManyRequests:
				refused.Add(1)
			default:
				failed.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(120 * time.Second)
	peak := uint64(0)
	for arrived()+refused.Load()+failed.Load() < int64(n) && time.Now().Before(deadline) {
		if rss, err := proxy.rss(); err == nil {
			peak = max(peak, rss)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if hwm, err := procStatus(proxy.cmd.Process.Pid, "VmHWM:"); err == nil {
		peak = max(peak, hwm)
	}
	complete := arrived()+refused.Load()+failed.Load() >= int64(n)
	res.Admitted = int(arrived())
	release()
	released = true
	wg.Wait()
	res.Refused, res.Failed, res.Peak = int(refused.Load()), int(failed.Load()), peak
	if !complete {
		return res, errors.New("uploads neither arrived nor were refused within 120s")
	}
	return res, nil
}
