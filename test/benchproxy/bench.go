/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package benchproxy measures the router proxy against a direct connection and a plain
// httputil.ReverseProxy hop, in one run, on the same fake upstream and client: requests per second
// at a concurrency, the latency each hop adds, the time to first byte a stream gets, and the
// proxy's RSS with many streams open. cmd/bench-proxy runs it (`make bench-proxy`).
package benchproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// Options of a run.
type Options struct {
	// ProxyBinary is the built cmd/router-proxy.
	ProxyBinary string
	// HopCommand runs the plain hop (with PlainHopEnv set); for cmd/bench-proxy, itself.
	HopCommand []string
	// Concurrency of the throughput runs; Duration of each; Rounds of the three modes, interleaved.
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
	Rounds      int
	// TTFBSamples sequential streams per mode; as many sequential non-streaming requests measure
	// the latency a hop adds without queueing.
	TTFBSamples int
	// Streams held open at once for the RSS measurement.
	Streams int
	// MemoryLimit, when not zero, is the router's GOMEMLIMIT in bytes, as the operator's
	// Deployment sets it from the container's memory limit.
	MemoryLimit int64
	// SkipPayloads skips the memory-budget cases; OnlyPayload, when set, runs only the one whose
	// name begins with it (and nothing else).
	SkipPayloads bool
	OnlyPayload  string
	// Hostile is how many hostile clients of each kind (slow bodies, non-reading) stand beside the
	// normal ones (hostile.go); 0 skips the case.
	Hostile int
	// Uploads concurrent audio uploads of UploadSize bytes for the peak-RSS case (uploads.go); 0
	// skips it.
	Uploads, UploadSize int
	// BodyCPURequests bodies of BodyCPUSize bytes per kind and hop for the CPU-per-MiB case
	// (cpu.go); 0 skips it.
	BodyCPURequests, BodyCPUSize int
	// Limits runs the client-limits case (limits.go): limits off against limits counted in a
	// redis-server on loopback.
	Limits bool
	Log    io.Writer
}

// Mode is one way from the client to the upstream.
type Mode string

const (
	Direct   Mode = "direct"
	PlainHop Mode = "plain httputil.ReverseProxy"
	Router   Mode = "router-proxy"
)

// Modes in report order.
var Modes = []Mode{Direct, PlainHop, Router}

// Result of a run.
type Result struct {
	Options Options
	Load    [2]string // uptime before and after
	Machine string
	Through map[Mode]Throughput
	TTFB    map[Mode]Latency
	// Unloaded is the latency of one client's sequential requests: what a hop adds without
	// queueing behind 63 others on 2 cores.
	Unloaded map[Mode]Latency
	RSS      map[Mode]Memory // PlainHop and Router
	// Payloads are the memory-budget cases.
	Payloads []PayloadResult
	// Failures are requests that failed, by mode.
	Failures map[Mode]int
	// Hostile, Uploads and BodyCPU are the cases of clients a shared proxy meets; nil when skipped.
	Hostile *HostileResult
	Uploads *UploadResult
	BodyCPU *BodyCPU
	Limits  *LimitsResult
}

// Throughput is the median round of a mode.
type Throughput struct {
	RPS      float64
	P50, P99 time.Duration
	Requests int
}

// Latency percentiles.
type Latency struct{ P50, P99 time.Duration }

// Memory of a proxy process: idle, and with Streams streams open.
type Memory struct{ IdleRSS, StreamsRSS uint64 }

// child is a proxy process.
type child struct {
	cmd  *exec.Cmd
	addr string
	// metrics is the router-proxy's /metrics address; empty for the plain hop.
	metrics string
}

func (c *child) stop() {
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

func (c *child) rss() (uint64, error) { return procRSS(c.cmd.Process.Pid) }

// goroutines is the router-proxy's go_goroutines; -1 when it cannot be read.
func (c *child) goroutines() int {
	if c.metrics == "" {
		return -1
	}
	resp, err := http.Get("http://" + c.metrics + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil || families["go_goroutines"] == nil || len(families["go_goroutines"].Metric) == 0 {
		return -1
	}
	return int(families["go_goroutines"].Metric[0].GetGauge().GetValue())
}

// Run measures.
func Run(ctx context.Context, o Options) (*Result, error) {
	logf := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", a...)
		}
	}
	res := &Result{Options: o, Through: map[Mode]Throughput{}, TTFB: map[Mode]Latency{}, Unloaded: map[Mode]Latency{}, RSS: map[Mode]Memory{}, Failures: map[Mode]int{},
		Machine: fmt.Sprintf("%d cores, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())}
	res.Load[0] = uptime()

	up, err := startUpstream()
	if err != nil {
		return nil, err
	}
	defer up.close()
	tmp, err := os.MkdirTemp("", "bench-proxy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if o.OnlyPayload != "" {
		err := payloadCases(ctx, o, up, tmp, res, logf)
		res.Load[1] = uptime()
		return res, err
	}

	hop, err := startHop(ctx, o.HopCommand, up.url)
	if err != nil {
		return nil, fmt.Errorf("plain hop: %w", err)
	}
	defer hop.stop()
	router, err := startRouter(ctx, o.ProxyBinary, up.url, tmp, o.MemoryLimit)
	if err != nil {
		return nil, fmt.Errorf("router-proxy: %w", err)
	}
	defer router.stop()
	base := map[Mode]string{Direct: up.url, PlainHop: "http://" + hop.addr, Router: "http://" + router.addr}

	idle := map[Mode]uint64{}
	for m, c := range map[Mode]*child{PlainHop: hop, Router: router} {
		if idle[m], err = c.rss(); err != nil {
			return nil, err
		}
	}

	rounds := map[Mode][]Throughput{}
	for r := 0; r < o.Rounds; r++ {
		for _, m := range Modes {
			t, failed := throughput(ctx, base[m], o.Concurrency, o.Warmup, o.Duration)
			res.Failures[m] += failed
			rounds[m] = append(rounds[m], t)
			logf("round %d %-28s %8.0f req/s  p50 %v  p99 %v", r+1, m, t.RPS, t.P50, t.P99)
		}
	}
	for _, m := range Modes {
		res.Through[m] = median(rounds[m])
	}

	samples, seq := map[Mode][]time.Duration{}, map[Mode][]time.Duration{}
	for i := 0; i < o.TTFBSamples; i++ {
		for _, m := range Modes {
			d, err := ttfb(ctx, base[m])
			if err != nil {
				res.Failures[m]++
				logf("%s stream: %v", m, err)
				continue
			}
			samples[m] = append(samples[m], d)
			t0 := time.Now()
			if err := post(ctx, ttfbClient, base[m]+"/v1/chat/completions", requestBody); err != nil {
				res.Failures[m]++
				logf("%s request: %v", m, err)
				continue
			}
			seq[m] = append(seq[m], time.Since(t0))
		}
	}
	for _, m := range Modes {
		res.TTFB[m] = Latency{P50: percentile(samples[m], 50), P99: percentile(samples[m], 99)}
		res.Unloaded[m] = Latency{P50: percentile(seq[m], 50), P99: percentile(seq[m], 99)}
		logf("ttfb %-28s p50 %v  p99 %v; one client: p50 %v p99 %v", m, res.TTFB[m].P50, res.TTFB[m].P99, res.Unloaded[m].P50, res.Unloaded[m].P99)
	}

	if o.Limits {
		if res.Limits, err = limitsCase(ctx, o, up.url, tmp, logf); err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
	}

	for _, m := range []Mode{PlainHop, Router} {
		c := map[Mode]*child{PlainHop: hop, Router: router}[m]
		rss, failed, err := streamsRSS(ctx, up, base[m], c, o.Streams)
		if err != nil {
			return nil, fmt.Errorf("%s with %d streams: %w", m, o.Streams, err)
		}
		res.Failures[m] += failed
		res.RSS[m] = Memory{IdleRSS: idle[m], StreamsRSS: rss}
		logf("rss %-28s idle %s, %d streams %s", m, mib(idle[m]), o.Streams, mib(rss))
	}
	if o.BodyCPURequests > 0 {
		bc, err := bodyCPU(ctx, map[Mode]*child{PlainHop: hop, Router: router}, o.BodyCPURequests, o.BodyCPUSize)
		if err != nil {
			return nil, err
		}
		res.BodyCPU = &bc
		for _, k := range []string{"json", "multipart"} {
			logf("cpu per MiB of %-9s body: plain hop %v, router-proxy %v", k, bc.PerMiB[k][PlainHop], bc.PerMiB[k][Router])
		}
	}
	if o.Hostile > 0 {
		// A process of its own with short waits, so the hostile clients' limits pass within a
		// phase: the body read timeout and the stream idle limit (a client that stops reading).
		hr, err := startRouter(ctx, o.ProxyBinary, up.url, tmp, o.MemoryLimit, "--body-read-timeout=2s", "--stream-idle-timeout=2s")
		if err != nil {
			return nil, fmt.Errorf("router-proxy for the hostile case: %w", err)
		}
		res.Hostile, err = hostile(ctx, o, hr, logf)
		hr.stop()
		if err != nil {
			return nil, fmt.Errorf("hostile clients: %w", err)
		}
	}
	if o.Uploads > 0 {
		ur, err := startRouter(ctx, o.ProxyBinary, up.url, tmp, o.MemoryLimit)
		if err != nil {
			return nil, fmt.Errorf("router-proxy for the uploads: %w", err)
		}
		u, err := uploads(ctx, up, ur, o.Uploads, o.UploadSize)
		ur.stop()
		if err != nil {
			return nil, fmt.Errorf("uploads: %w", err)
		}
		u.MemoryLimit = o.MemoryLimit
		res.Uploads = &u
		res.Failures[Router] += u.Failed
		logf("uploads %d x %s: %d admitted, %d refused, %d failed, peak RSS %s", u.Requests, mib(uint64(u.Size)), u.Admitted, u.Refused, u.Failed, mib(u.Peak))
	}
	if !o.SkipPayloads {
		if err := payloadCases(ctx, o, up, tmp, res, logf); err != nil {
			return nil, err
		}
	}
	res.Load[1] = uptime()
	return res, nil
}

// payloadCases measures the memory-budget cases (o.OnlyPayload: the one it names), each mode in a
// process of its own.
func payloadCases(ctx context.Context, o Options, up *upstream, tmp string, res *Result, logf func(string, ...any)) error {
	for _, pl := range Payloads {
		if !strings.HasPrefix(pl.Name, o.OnlyPayload) {
			continue
		}
		pr := PayloadResult{Payload: pl, Peak: map[Mode]uint64{}}
		for _, m := range []Mode{PlainHop, Router} {
			// A fresh process per case: the peak is the case's own, not what earlier
			// rounds left in the heap.
			var c *child
			var err error
			if m == Router {
				c, err = startRouter(ctx, o.ProxyBinary, up.url, tmp, o.MemoryLimit)
			} else {
				c, err = startHop(ctx, o.HopCommand, up.url)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			peak, failed, err := payloadPeak(ctx, up, "http://"+c.addr, c, pl)
			c.stop()
			if err != nil {
				return fmt.Errorf("%s, %s: %w", m, pl.Name, err)
			}
			res.Failures[m] += failed
			pr.Peak[m] = peak
			logf("payload %-24s %-28s peak RSS %s (budget %s)", pl.Name, m, mib(peak), mib(pl.Budget()))
		}
		res.Payloads = append(res.Payloads, pr)
	}
	return nil
}

// routerDocument sends bench-model to the upstream as an external API base.
func routerDocument(upstreamURL string) routingv1.Document {
	return routingv1.Document{
		Backends: []routingv1.Backend{{Name: "upstream", Kind: routingv1.KindExternal, URL: upstreamURL + "/v1", Provider: routingv1.ProviderOpenAICompatible}},
		Rules:    []routingv1.Rule{{Name: "bench", Models: []string{"bench-model"}, Backend: "upstream"}},
	}
}

// startRouter runs the proxy binary on routerDocument. Its request log goes to a file, so
// logging costs what it costs.
func startRouter(ctx context.Context, binary, upstreamURL, dir string, memoryLimit int64, extra ...string) (*child, error) {
	return startRouterWith(ctx, binary, routerDocument(upstreamURL), dir, memoryLimit, extra...)
}

// startRouterWith runs the proxy binary on doc, written into dir.
func startRouterWith(ctx context.Context, binary string, d routingv1.Document, dir string, memoryLimit int64, extra ...string) (*child, error) {
	doc, err := routingv1.Marshal(d)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, doc, 0o600); err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp(dir, "router-proxy-*.log") // one per process: several may run at once
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, binary, append([]string{"--config=" + cfg, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0", "--shutdown-delay=0s"}, extra...)...)
	cmd.Stderr = logFile
	if memoryLimit > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOMEMLIMIT=%d", memoryLimit))
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd}
	// The "serving" line names the address.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(logFile.Name())
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"msg":"serving"`) {
				_, rest, _ := strings.Cut(line, `"listen":"`)
				c.addr, _, _ = strings.Cut(rest, `"`)
				_, rest, _ = strings.Cut(line, `"metricsListen":"`)
				c.metrics, _, _ = strings.Cut(rest, `"`)
				return c, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.stop()
	return nil, errors.New("did not start serving within 30s")
}

func startHop(ctx context.Context, command []string, upstreamURL string) (*child, error) {
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Env = append(os.Environ(), PlainHopEnv+"="+upstreamURL)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		c.stop()
		return nil, err
	}
	c.addr = strings.TrimSpace(line)
	return c, nil
}

func procRSS(pid int) (uint64, error) { return procStatus(pid, "VmRSS:") }

// procStatus is a kB field of /proc/pid/status, in bytes.
func procStatus(pid int, field string) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			var kb uint64
			_, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10, err
		}
	}
	return 0, errors.New("no " + field)
}

func uptime() string {
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
