/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// redisScriptCalls is how many script calls (EVALSHA and EVAL) the Redis at addr has run.
func redisScriptCalls(addr string) int {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, line := range strings.Split(info, "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
				v, _ := strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
				n += v
			}
		}
	}
	return n
}

var _ = Describe("Client limits under concurrent load", func() {
	It("batches a replica's concurrent requests into shared round trips to Redis: two proxy processes with 64 concurrent clients admit 60 per minute plus what refills across both, each refused request gets its own 429 with its headers, in fewer script calls than requests [L10, L4, L3]", func() {
		ns := newNamespace()
		redisSrv, cloud := limitsWorld(ns, "")
		limitedRouter(ns, cloud.URL, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Proxy.Replicas = ptr.To(int32(2))
			r.Spec.Clients[0].Limits.RequestsPerMinute = ptr.To(int64(60))
			r.Spec.Limits = &inferencev1alpha1.LimitsSpec{Redis: &inferencev1alpha1.RedisSpec{Address: redisSrv.Addr, Timeout: ptr.To("2s")}}
		})
		procs := []*proxyProcess{runProxyAsDeployed(ns, "mr-router-proxy"), runProxyAsDeployed(ns, "mr-router-proxy")}
		before := redisScriptCalls(redisSrv.Addr)

		const clients, each = 64, 3
		var ok, refused atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for w := range clients {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := range each {
					resp, body := chat(procs[(w+i)%2], "key-a", smallChat)
					Expect(resp.Header.Get("X-Ratelimit-Limit-Requests")).To(Equal("60"), "an answer without its own limit headers")
					switch resp.StatusCode {
					case http.StatusOK:
						ok.Add(1)
					case http.StatusTooManyRequests:
						refused.Add(1)
						Expect(resp.Header.Get("X-Ratelimit-Remaining-Requests")).To(Equal("0"))
						Expect(resp.Header.Get("Retry-After")).To(Equal("1"))
						var e struct{ Error struct{ Code, Type string } }
						Expect(json.Unmarshal([]byte(body), &e)).To(Succeed())
						Expect(e.Error.Code).To(Equal("rate_limit_exceeded"))
						Expect(e.Error.Type).To(Equal("requests"))
					default:
						Fail(fmt.Sprintf("status %d: %s", resp.StatusCode, body))
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		calls := redisScriptCalls(redisSrv.Addr) - before
		By(fmt.Sprintf("%d requests in %v: %d admitted, %d refused, %d script calls", clients*each, elapsed, ok.Load(), refused.Load(), calls))
		Expect(ok.Load()).To(BeNumerically(">=", 60))
		Expect(ok.Load()).To(BeNumerically("<=", 60+int64(elapsed.Seconds())+1), "the two replicas let more through than one shared limit")
		Expect(ok.Load() + refused.Load()).To(BeEquivalentTo(clients * each))
		// One script call per request (and one per settlement) would be at least clients*each.
		Expect(calls).To(BeNumerically("<", clients*each), "the replicas sent a script call per request")
	})
})
