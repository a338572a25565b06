/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
)

var vllm = routingv1.EngineMetrics{Path: "/metrics", Waiting: "vllm:num_requests_waiting", Running: "vllm:num_requests_running", KVCache: "vllm:kv_cache_usage_perc"}

// vllmPage is a metrics page shaped like vLLM's: the three gauges among histograms of many
// buckets (what makes a real page tens of KB), two model series per gauge.
func vllmPage(waiting, running int, kv float64) string {
	var b strings.Builder
	for h := range 30 {
		fmt.Fprintf(&b, "# HELP vllm:histogram_%d A latency.\n# TYPE vllm:histogram_%d histogram\n", h, h)
		for i := range 20 {
			fmt.Fprintf(&b, "vllm:histogram_%d_bucket{engine=\"0\",le=\"%d\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} %d\n", h, 1<<i, i*100)
		}
		fmt.Fprintf(&b, "vllm:histogram_%d_sum{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 1234.5\nvllm:histogram_%d_count{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 2000\n", h, h)
	}
	fmt.Fprintf(&b, "# HELP vllm:num_requests_waiting Number of requests waiting.\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine=\"0\",model_name=\"a\"} %d\nvllm:num_requests_waiting{engine=\"1\",model_name=\"a\"} 0\n", waiting)
	fmt.Fprintf(&b, "# HELP vllm:num_requests_running Number of requests running.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"a\"} %d\n", running)
	fmt.Fprintf(&b, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine=\"0\",model_name=\"a\"} %g", kv) // no final newline
	return b.String()
}

func TestParseReadsAnEnginesGaugesAmongItsHistograms(t *testing.T) {
	l, err := Parse(strings.NewReader(vllmPage(7, 3, 0.42)), vllm)
	if err != nil {
		t.Fatal(err)
	}
	if l.Waiting != 7 || l.Running != 3 || l.KVCache != 0.42 || !l.HasKV {
		t.Fatalf("read %+v, want waiting 7, running 3, KV 0.42", l)
	}
	// TGI exports no KV gauge: the load has none, and that is no error.
	tgi := routingv1.EngineMetrics{Path: "/metrics", Waiting: "tgi_queue_size", Running: "tgi_batch_current_size"}
	l, err = Parse(strings.NewReader("tgi_queue_size 2\ntgi_batch_current_size 5\n"), tgi)
	if err != nil || l.Waiting != 2 || l.Running != 5 || l.HasKV {
		t.Fatalf("TGI page: %+v, %v", l, err)
	}
	// A page without the queue (the server was started without its metrics) is a failed read.
	if _, err := Parse(strings.NewReader("# nothing\nother_metric 1\n"), vllm); err == nil || !strings.Contains(err.Error(), "vllm:num_requests_waiting") {
		t.Fatalf("a page without the gauges: %v", err)
	}
}

// A read has a deadline (a metrics endpoint that hangs ends the read at the timeout) and a
// bounded page (a longer one is refused, not held).
// Proves E6.
func TestReadHasADeadlineAndABoundedPage(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		fmt.Fprint(w, vllmPage(1, 1, 0.1))
	}))
	defer srv.Close()
	start := time.Now()
	_, err := Read(context.Background(), srv.Client(), srv.URL+"/hang", vllm, 50*time.Millisecond, 1<<20)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("a hanging endpoint: %v after %s", err, time.Since(start))
	}
	if _, err := Read(context.Background(), srv.Client(), srv.URL+"/metrics", vllm, time.Second, 1<<10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a page over the bound: %v", err)
	}
	if l, err := Read(context.Background(), srv.Client(), srv.URL+"/metrics", vllm, time.Second, 1<<20); err != nil || l.Waiting != 1 {
		t.Fatalf("a page within the bound: %+v, %v", l, err)
	}
}

// The scraper gives each pod its engine's figures; a pod whose endpoint hangs stays blind and
// is counted so, and is not read again while its read is still running.
// Proves E2, E6.
func TestScraperCountsThePodsScoredBlind(t *testing.T) {
	var hangReads atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang/metrics" {
			hangReads.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		fmt.Fprint(w, vllmPage(4, 2, 0.5))
	}))
	defer srv.Close()
	defer close(release)
	addr := strings.TrimPrefix(srv.URL, "http://")
	ok, hung := &balance.Pool{}, &balance.Pool{}
	ok.Update([]string{addr})
	hung.Update([]string{addr})
	okM, hangM := vllm, vllm
	hangM.Path = "/hang/metrics"
	cfg := &routingv1.EngineScoring{Interval: "20ms", Timeout: "10s", StaleAfter: "60ms", MaxBodyBytes: 1 << 20}
	reg := prometheus.NewRegistry()
	s := NewScraper(srv.Client(), func() (*routingv1.EngineScoring, []Target) {
		return cfg, []Target{{Backend: "ok", Pool: ok, Metrics: &okM}, {Backend: "hung", Pool: hung, Metrics: &hangM}, {Backend: "generic", Pool: hung}}
	}, reg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for !ok.Endpoints()[0].EngineFresh(time.Now(), time.Second) || testutil.ToFloat64(s.blind.WithLabelValues("ok")) != 0 || testutil.ToFloat64(s.blind.WithLabelValues("hung")) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("blind pods: ok %v, hung %v", testutil.ToFloat64(s.blind.WithLabelValues("ok")), testutil.ToFloat64(s.blind.WithLabelValues("hung")))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // several intervals
	cancel()
	if n := hangReads.Load(); n != 1 {
		t.Fatalf("the hanging endpoint was read %d times while its first read still ran", n)
	}
}

// The cost of one read of a vLLM-sized page over loopback HTTP, and of its parse alone: the
// interval (controllers/modelrouter, defaultEngineScoring) is chosen from these figures.
func BenchmarkRead(b *testing.B) {
	page := vllmPage(4, 2, 0.5)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, page) }))
	defer srv.Close()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(context.Background(), srv.Client(), srv.URL+"/metrics", vllm, time.Second, 4<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	page := vllmPage(4, 2, 0.5)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(strings.NewReader(page), vllm); err != nil {
			b.Fatal(err)
		}
	}
}
