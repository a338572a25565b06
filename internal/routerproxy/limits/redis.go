/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// redisStore counts limits in Redis, shared by every replica.
type redisStore struct {
	c       *redis.Client
	timeout time.Duration
	// replica names this store's concurrency slots in Redis (random, one per store): a replica
	// that dies takes its name with it, and its slots end with their lease.
	replica string
	// b holds what waits for the next round trip (batch.go); done stops its loop. failed and
	// settled report each batch's settlements (the limiter's metrics and log).
	b       batcher
	leases  atomic.Uint64
	done    chan struct{}
	closing sync.Once
	failed  func(error)
	settled func(int)
}

// newRedisStore connects lazily (the first call dials). passwordFile, when set, is read at each
// new connection, so a rotated password is used without a restart.
//
// Note: each call is bounded by timeout (dial, read, write and waiting for a pooled connection)
// and never retried: a slow Redis costs a request at most one timeout, and the failure mode
// decides what that request gets.
func newRedisStore(r *routingv1.Redis, passwordFile string) *redisStore {
	t := r.TimeoutDuration()
	o := &redis.Options{
		Addr: r.Address, DialTimeout: t, ReadTimeout: t, WriteTimeout: t, PoolTimeout: t,
		MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true, Protocol: 2,
	}
	if r.Password && passwordFile != "" {
		o.CredentialsProvider = func() (string, string) {
			b, _ := os.ReadFile(passwordFile)
			return "", strings.TrimSpace(string(b))
		}
	}
	if r.TLS {
		host, _, _ := net.SplitHostPort(r.Address)
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
		if r.ServerName != "" {
			o.TLSConfig.ServerName = r.ServerName
		}
	}
	s := &redisStore{c: redis.NewClient(o), timeout: t, replica: rand.Text(), b: batcher{wake: make(chan struct{}, 1), allowances: map[allowanceKey]*allowance{}, spent: map[allowanceKey]time.Time{}, inflight: map[*Ticket]struct{}{}}, done: make(chan struct{}),
		failed: func(error) {}, settled: func(int) {}}
	s.b.later = time.AfterFunc(time.Hour, func() {
		s.b.mu.Lock()
		s.b.urgent = true
		s.b.mu.Unlock()
		s.poke()
	})
	s.b.later.Stop()
	s.b.retry = time.AfterFunc(time.Hour, s.retryNow)
	s.b.retry.Stop()
	go s.loop()
	go s.renewLoop()
	return s
}

func (s *redisStore) close() error {
	var err error
	s.closing.Do(func() {
		s.giveBackAll()
		close(s.done)
		err = s.c.Close()
	})
	return err
}

// quiet drops go-redis's own log lines: plain text on stderr would break the proxy's JSON log,
// and the limiter says once per change of state (a JSON line) that the store fails.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }
