/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package benchproxy

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/procstat"
	"github.com/llmkube/operator/test/redisserver"
	goredis "github.com/redis/go-redis/v9"
)

// The limits case: the cost of client limits counted in Redis (docs/limits.md). Three
// router-proxy processes on the same client key: one whose client has no limits (limits off: the
// key is still identified and labelled), and two whose client has every limit, so large that
// nothing is refused, counted in the replica's memory (what the limits cost without a shared
// store) or in a redis-server on loopback (limits on: the admissions and settlements of the
// requests in flight batched into pipelined script calls). Interleaved rounds, as the modes of
// the main table.
const (
	limitsOff    = "limits off"
	limitsMemory = "limits on (memory)"
	limitsOn     = "limits on (Redis)"
	benchKey     = "bench-client-key"
)

// LimitsResult is the limits case.
type LimitsResult struct {
	Through  map[string]Throughput
	Unloaded map[string]Latency
	// IdleRSS and RSS are each router's RSS before and after the throughput rounds.
	IdleRSS, RSS map[string]uint64
	Failures     map[string]int
	// CPU is the CPU per request of the measured part of the rounds: the router's and, with
	// limits on, redis-server's (what the limits cost besides the hop; docs/limits.md).
	CPU, RedisCPU map[string]time.Duration
	// LoadCPU is this process's (the clients and the upstream) and MachineCPU every CPU's busy
	// time (/proc/stat, softirqs included) per request: throughput is the machine's CPU, so what
	// the limits cost shows there, including what the client and the kernel spend on it.
	LoadCPU, MachineCPU map[string]time.Duration
	// ScriptCalls is redis-server's script calls per request with limits on: what batches and
	// allowances leave of a round trip per request (docs/limits.md, L10 and L11).
	ScriptCalls float64
	// RoundRatios are limits on over limits off in each round: the two modes of a round ran
	// seconds apart, so on a shared machine their ratio is steadier than the ratio of medians.
	RoundRatios []float64
	// MemoryRoundRatios are limits counted in the replica's memory over limits off: what the
	// limits cost without their shared store.
	MemoryRoundRatios []float64
}

// benchT lets the benchmark start a redis-server with the tests' helper: a failure is an error
// of the case, cleanups run when it ends.
type benchT struct {
	dir      string
	cleanups []func()
}

type benchFailure struct{ err error }

func (*benchT) Helper()                   {}
func (t *benchT) TempDir() string         { d, _ := os.MkdirTemp(t.dir, "redis-"); return d }
func (t *benchT) Cleanup(f func())        { t.cleanups = append(t.cleanups, f) }
func (*benchT) Fatalf(f string, a ...any) { panic(benchFailure{fmt.Errorf(f, a...)}) }

func (t *benchT) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// authTransport sends the client's key with every request, as an SDK does.
type authTransport struct{ next http.RoundTripper }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+benchKey)
	return a.next.RoundTrip(r)
}

// limitsDocument is mode's routing document: no limits, every limit counted in this replica's
// memory, or every limit counted in redis.
func limitsDocument(upstreamURL, mode string, redis *redisserver.Server) routingv1.Document {
	doc := routerDocument(upstreamURL)
	c := routingv1.Client{Name: "bench", SecretKeys: []string{"bench"}}
	if mode != limitsOff {
		const huge = int64(1) << 40
		c.Limits = &routingv1.Limits{RequestsPerMinute: huge, TokensPerMinute: huge, ConcurrentRequests: 1 << 20, TokensPerDay: huge, TokensPerMonth: huge}
		doc.Limits = &routingv1.LimitsStore{KeyPrefix: "bench"}
	}
	if mode == limitsOn {
		doc.Limits.Redis = &routingv1.Redis{Address: redis.Addr}
	}
	doc.Clients = []routingv1.Client{c}
	return doc
}

// limitsCase measures limits off against limits on.
func limitsCase(ctx context.Context, o Options, upstreamURL, dir string, logf func(string, ...any)) (res *LimitsResult, err error) {
	t := &benchT{dir: dir}
	defer t.close()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(benchFailure)
			if !ok {
				panic(r)
			}
			res, err = nil, f.err
		}
	}()
	redis := redisserver.Start(t, "")
	keys := filepath.Join(dir, "client-keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(keys, "bench"), []byte(benchKey), 0o600); err != nil {
		return nil, err
	}
	children := map[string]*child{}
	modes := []string{limitsOff, limitsMemory, limitsOn}
	for i, name := range modes {
		sub := filepath.Join(dir, fmt.Sprintf("mode-%d", i))
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return nil, err
		}
		c, err := startRouterWith(ctx, o.ProxyBinary, limitsDocument(upstreamURL, name, redis), sub, o.MemoryLimit, "--api-keys-dir="+keys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer c.stop()
		children[name] = c
	}
	res = &LimitsResult{Through: map[string]Throughput{}, Unloaded: map[string]Latency{}, IdleRSS: map[string]uint64{}, RSS: map[string]uint64{}, Failures: map[string]int{},
		CPU: map[string]time.Duration{}, RedisCPU: map[string]time.Duration{}, LoadCPU: map[string]time.Duration{}, MachineCPU: map[string]time.Duration{}}
	for _, m := range modes {
		if res.IdleRSS[m], err = children[m].rss(); err != nil {
			return nil, err
		}
	}
	rounds := map[string][]Throughput{}
	rc := goredis.NewClient(&goredis.Options{Addr: redis.Addr})
	defer rc.Close()
	var onCalls int64
	cpu, redisCPU, loadCPU, machineCPU, requests := map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}, map[string]int{}
	for r := 0; r < o.Rounds; r++ {
		for _, m := range modes {
			client := newClient(o.Concurrency)
			client.Transport = authTransport{client.Transport}
			// CPU from the end of the warm-up, as the requests counted.
			from := make(chan [4]time.Duration, 1)
			calls := make(chan int64, 1)
			time.AfterFunc(o.Warmup, func() {
				from <- [4]time.Duration{cpuTime(children[m].cmd.Process.Pid), cpuTime(redis.Pid()), cpuTime(os.Getpid()), procstat.Busy(false)}
				calls <- scriptCalls(ctx, rc)
			})
			th, failed := throughputWith(ctx, client, "http://"+children[m].addr, o.Concurrency, o.Warmup, o.Duration)
			f := <-from
			proxyCPU, machine := cpuTime(children[m].cmd.Process.Pid)-f[0], procstat.Busy(false)-f[3]
			cpu[m] += proxyCPU
			loadCPU[m] += cpuTime(os.Getpid()) - f[2]
			machineCPU[m] += machine
			if m == limitsOn {
				redisCPU[m] += cpuTime(redis.Pid()) - f[1]
				onCalls += scriptCalls(ctx, rc) - <-calls
			}
			requests[m] += th.Requests
			res.Failures[m] += failed
			rounds[m] = append(rounds[m], th)
			perRequest := func(d time.Duration) time.Duration { return d / time.Duration(max(th.Requests, 1)) }
			logf("limits round %d %-18s %8.0f req/s  p50 %v  p99 %v  CPU per request: router %v, machine %v", r+1, m, th.RPS, th.P50, th.P99, perRequest(proxyCPU), perRequest(machine))
		}
	}
	for r := range rounds[limitsOn] {
		res.RoundRatios = append(res.RoundRatios, rounds[limitsOn][r].RPS/rounds[limitsOff][r].RPS)
		res.MemoryRoundRatios = append(res.MemoryRoundRatios, rounds[limitsMemory][r].RPS/rounds[limitsOff][r].RPS)
	}
	for _, m := range modes {
		if requests[m] > 0 {
			n := time.Duration(requests[m])
			res.CPU[m], res.RedisCPU[m], res.LoadCPU[m], res.MachineCPU[m] = cpu[m]/n, redisCPU[m]/n, loadCPU[m]/n, machineCPU[m]/n
		}
	}
	if requests[limitsOn] > 0 {
		res.ScriptCalls = float64(onCalls) / float64(requests[limitsOn])
	}
	seq := map[string][]time.Duration{}
	one := newClient(4)
	one.Transport = authTransport{one.Transport}
	for i := 0; i < o.TTFBSamples; i++ {
		for _, m := range modes {
			t0 := time.Now()
			if err := post(ctx, one, "http://"+children[m].addr+"/v1/chat/completions", requestBody); err != nil {
				res.Failures[m]++
				continue
			}
			seq[m] = append(seq[m], time.Since(t0))
		}
	}
	for _, m := range modes {
		res.Through[m] = median(rounds[m])
		res.Unloaded[m] = Latency{P50: percentile(seq[m], 50), P99: percentile(seq[m], 99)}
		if res.RSS[m], err = children[m].rss(); err != nil {
			return nil, err
		}
		logf("limits %-18s one client p50 %v p99 %v; rss idle %s, after %s", m, res.Unloaded[m].P50, res.Unloaded[m].P99, mib(res.IdleRSS[m]), mib(res.RSS[m]))
	}
	return res, nil
}

// scriptCalls is how many scripts redis-server has run so far; zero when it cannot tell.
func scriptCalls(ctx context.Context, c *goredis.Client) int64 {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0
	}
	return redisserver.ScriptCalls(info)
}

// limitsMarkdown reports the limits case with the goals.
func limitsMarkdown(r *Result) string {
	l := r.Limits
	if l == nil {
		return ""
	}
	o := r.Options
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Client limits in Redis\n\nThe same client key through three router-proxies: its client without limits (limits off), and with every limit (requests and tokens per minute, concurrent, per day and month, none reached) counted in the replica's memory or in a redis-server on loopback (limits on). Non-streaming chat at %d concurrent, %d rounds of %s interleaved, the median by req/s; one client's sequential requests (%d samples each) for the added latency; RSS before and after the rounds.\n\n", o.Concurrency, o.Rounds, o.Duration, o.TTFBSamples)
	b.WriteString("| mode | req/s | vs limits off | p50 / p99 at " + fmt.Sprint(o.Concurrency) + " | one client: p50 / p99 | added p50 / p99 | CPU per request: router-proxy + redis-server | clients and upstream | machine | RSS idle / after | failed |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	off, uoff := l.Through[limitsOff], l.Unloaded[limitsOff]
	for _, m := range []string{limitsOff, limitsMemory, limitsOn} {
		t, u := l.Through[m], l.Unloaded[m]
		fmt.Fprintf(&b, "| %s | %.0f | %.2fx | %v / %v | %v / %v | %+v / %+v | %v + %v | %v | %v | %s / %s | %d |\n", m, t.RPS, t.RPS/off.RPS,
			t.P50.Round(time.Microsecond), t.P99.Round(time.Microsecond), u.P50.Round(time.Microsecond), u.P99.Round(time.Microsecond),
			(u.P50 - uoff.P50).Round(time.Microsecond), (u.P99 - uoff.P99).Round(time.Microsecond),
			l.CPU[m].Round(time.Microsecond), l.RedisCPU[m].Round(time.Microsecond), l.LoadCPU[m].Round(time.Microsecond), l.MachineCPU[m].Round(time.Microsecond), mib(l.IdleRSS[m]), mib(l.RSS[m]), l.Failures[m])
	}
	on, uon := l.Through[limitsOn], l.Unloaded[limitsOn]
	fmt.Fprintf(&b, "\nredis-server ran %.3f script calls per request with limits on (a call per %.0f requests).\n", l.ScriptCalls, 1/max(l.ScriptCalls, 1e-9))
	fmt.Fprintf(&b, "\nLimits on over limits off in each interleaved round: %s (median **%.2fx**).\n", ratioList(l.RoundRatios), medianOf(l.RoundRatios))
	fmt.Fprintf(&b, "\nThe same limits counted in the replica's memory (no Redis; what one replica alone enforces) over limits off: %s (median %.2fx).\n", ratioList(l.MemoryRoundRatios), medianOf(l.MemoryRoundRatios))
	fmt.Fprintf(&b, "\nCPU per request is the process's user and system time over the measured part of the rounds (/proc, 10 ms ticks) divided by the requests counted; clients and upstream is this benchmark's own process, machine every CPU's busy time (/proc/stat, interrupts included): at %d concurrent on a machine this small, throughput is the machine's CPU, so the limits cost their added CPU.\n", o.Concurrency)
	fmt.Fprintf(&b, "\nGoals: ≥ 0.9× the throughput of limits off: **%.2fx**; added p99 ≤ 1 ms (one client): **%v**.\n", on.RPS/off.RPS, (uon.P99 - uoff.P99).Round(time.Microsecond))
	return b.String()
}

// ratioList is xs as a report lists ratios: "0.91x, 0.88x".
func ratioList(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.2fx", x)
	}
	return strings.Join(out, ", ")
}

// medianOf is the median of xs (0 when empty).
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
