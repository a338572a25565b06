/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"testing"
	"time"

	"github.com/prometheus/procfs"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/redisserver"
)

// BenchmarkRedisAdmitSettle is one replica's admissions and settlements of a client with every
// limit, from 64 goroutines, against a real redis-server: what batching costs the proxy's side
// (ns/op, allocs/op, with -cpuprofile) and redis-server (its CPU and script calls per request,
// reported as metrics).
func BenchmarkRedisAdmitSettle(b *testing.B) {
	srv := redisserver.Start(b, "")
	l := replica(b, srv.Addr, "2s", false)
	adm := admin(b, srv.Addr)
	const huge = int64(1) << 40
	c := client(routingv1.Limits{RequestsPerMinute: huge, TokensPerMinute: huge, ConcurrentRequests: 1 << 20, TokensPerDay: huge, TokensPerMonth: huge})
	if _, tk := l.Admit(c, 100); tk != nil {
		l.Settle(tk, 100)
	}
	calls, cpu := scriptCalls(b, adm), processCPU(b, srv.Pid())
	b.SetParallelism(32) // 64 goroutines on two cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, tk := l.Admit(c, 100)
			if tk == nil {
				b.Error("a request was not admitted")
				return
			}
			l.Settle(tk, 90)
		}
	})
	b.StopTimer()
	time.Sleep(10 * time.Millisecond) // the last settlements
	b.ReportMetric(float64(scriptCalls(b, adm)-calls)/float64(b.N), "calls/op")
	b.ReportMetric(float64(processCPU(b, srv.Pid())-cpu)/float64(b.N), "redis-ns/op")
}

// processCPU is pid's user and system time so far.
func processCPU(tb testing.TB, pid int) time.Duration {
	p, err := procfs.NewProc(pid)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := p.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}
