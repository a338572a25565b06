package limits

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/test/redisserver"
)

func cpuOfPid(pid int) float64 {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	i := strings.LastIndex(s, ")")
	f := strings.Fields(s[i+2:])
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}

func TestScratchRedisCost(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	srv := redisserver.Start(t, "")
	rs := redisFor(t, srv)
	const huge = int64(1) << 40
	for _, l := range []routingv1.Limits{
		{RequestsPerMinute: huge, TokensPerMinute: huge, ConcurrentRequests: 1 << 20, TokensPerDay: huge, TokensPerMonth: huge},
		{RequestsPerMinute: huge},
		{RequestsPerMinute: huge, TokensPerMinute: huge},
		{RequestsPerMinute: huge, ConcurrentRequests: 1 << 20},
	}[:nl()] {
		c := client(l)
		for _, n := range batches() {
			var prev []settlement
			total := 0
			c0 := cpuOfPid(srv.Pid())
			t0 := time.Now()
			for time.Since(t0) < 2*time.Second {
				as := make([]*admission, n)
				for i := range as {
					as[i] = &admission{t: newTicket("s", c, 100, time.Now()), done: make(chan struct{})}
				}
				_ = rs.send(as, prev)
				prev = prev[:0]
				for _, a := range as {
					if a.t.settles(50) {
						prev = append(prev, settlement{a.t, 50})
					}
				}
				total += n
			}
			cpu := cpuOfPid(srv.Pid()) - c0
			t.Logf("%+v batch %d: redis %.1f us CPU per request", l, n, cpu/float64(total)*1e6)
		}
	}
}

func batches() []int {
	if os.Getenv("BATCH") != "" {
		n, _ := strconv.Atoi(os.Getenv("BATCH"))
		return []int{n}
	}
	return []int{1, 4, 16, 64}
}

func nl() int {
	if os.Getenv("BATCH") != "" {
		return 1
	}
	return 4
}
