/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Payload is one memory-budget case: Requests requests with bodies of Size bytes in flight at
// once, held by the upstream (a stream after its first chunk, a non-streaming request before its
// answer) while the proxy's peak RSS is read.
type Payload struct {
	Name     string
	Requests int
	Size     int
	Stream   bool
}

// Payloads are the cases of the budget (docs/router.md, "Memory"): large prompts
// (long documents pasted in) and many long-context streams.
var Payloads = []Payload{
	{Name: "16 x 4 MiB concurrent", Requests: 16, Size: 4 << 20},
	{Name: "200 x 400 KB streams", Requests: 200, Size: 400_000, Stream: true},
}

// BudgetBase and BudgetFactor are the memory budget: peak RSS at most BudgetBase plus
// BudgetFactor times the bytes of the bodies in flight.
const (
	BudgetBase   = 40 << 20
	BudgetFactor = 1.5
)

// Budget is the budget of p.
func (p Payload) Budget() uint64 {
	return BudgetBase + uint64(BudgetFactor*float64(p.Requests*p.Size))
}

// PayloadResult is a case's peak RSS by mode.
type PayloadResult struct {
	Payload Payload
	Peak    map[Mode]uint64
}

// payloadBody is a chat completion request of size bytes: a system prompt and a long user
// message of prose, as a client pasting a document sends it.
func payloadBody(size int, stream bool) []byte {
	head, _ := json.Marshal(map[string]any{"model": "bench-model", "stream": stream, "temperature": 0.2, "max_tokens": 256})
	prose := "The quick brown fox jumps over the lazy dog while the committee reviews section 4.2 of the annual report. "
	msgs := `,"messages":[{"role":"system","content":"You are a careful assistant. Summarise the document."},{"role":"user","content":"`
	fill := size - len(head) - len(msgs) - len(`"}]}`)
	text := strings.Repeat(prose, fill/len(prose)+1)[:max(fill, 0)]
	var b bytes.Buffer
	b.Write(head[:len(head)-1])
	b.WriteString(msgs)
	b.WriteString(text)
	b.WriteString(`"}]}`)
	return b.Bytes()
}

// payloadPeak sends p through base, waits until every request is in flight at the upstream (or
// has its first chunk), and returns the proxy's peak RSS over the case.
func payloadPeak(ctx context.Context, up *upstream, base string, proxy *child, p Payload) (uint64, int, error) {
	resetPeak(proxy.cmd.Process.Pid)
	body := payloadBody(p.Size, p.Stream)
	release := up.holdStreams()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	arrived := up.countArrivals()
	client := newClient(p.Requests)
	defer client.CloseIdleConnections()
	var first, failed atomic.Int64
	var wg sync.WaitGroup
	for range p.Requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				first.Add(1)
				return
			}
			defer resp.Body.Close()
			if p.Stream {
				var b [1]byte
				_, err = io.ReadFull(resp.Body, b[:])
				first.Add(1)
				if err != nil {
					failed.Add(1)
					return
				}
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(120 * time.Second)
	ready := func() bool {
		if p.Stream {
			return first.Load() >= int64(p.Requests)
		}
		return arrived() >= int64(p.Requests)
	}
	peak := uint64(0)
	for !ready() && time.Now().Before(deadline) {
		if rss, err := proxy.rss(); err == nil {
			peak = max(peak, rss)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if hwm, err := procStatus(proxy.cmd.Process.Pid, "VmHWM:"); err == nil {
		peak = max(peak, hwm)
	}
	release()
	released = true
	wg.Wait()
	if !ready() {
		return peak, int(failed.Load()), errors.New("not every request was in flight within 120s")
	}
	return peak, int(failed.Load()), nil
}

// resetPeak resets the kernel's peak RSS (VmHWM) of pid, so a case's peak is its own.
func resetPeak(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}
