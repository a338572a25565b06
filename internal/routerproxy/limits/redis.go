/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// admitScript is gcra, the quotas and the concurrency of memory.admit in one atomic step, on
// Redis's own clock (TIME), so that replicas with skewed clocks still share one rate. It checks
// every limit first and writes only when all pass, so a refused request costs nothing.
//
// KEYS: rpm, tpm, day, month, concurrent. ARGV: the five limits (0: none), the tokens
// reserved, the day's and the month's end (Unix ms), the request id, the lease of a concurrency
// slot (ms). It returns {refused (0, or 1-based in allLimits order), retry ms, too large (0/1),
// requests remaining, requests reset ms, tokens remaining, tokens reset ms}.
//
// Note: a concurrency slot is a member of a sorted set scored by when its lease ends, so that
// the slots of a replica that died without settling free themselves when their lease ends.
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local period = 60000
local rpm, tpm, lday, lmonth, lconc = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local cost = tonumber(ARGV[6])
local refused, retry, large = 0, 0, 0
local function refuse(i, r)
  if refused == 0 then refused = i; retry = r end
end
local function gcra(key, limit, c)
  local tat = tonumber(redis.call('GET', key) or '0')
  local nxt = math.max(tat, now) + c * period / limit
  if nxt - now > period then return false, tat, nxt - period - now end
  return true, nxt, 0
end
local function window(tat, limit)
  tat = math.max(tat, now)
  return math.floor((period - (tat - now)) / (period / limit)), math.ceil(tat - now)
end
local out = {0, 0, 0, -1, 0, -1, 0}
local rOK, rTAT, tOK, tTAT, r
if rpm > 0 then
  rOK, rTAT, r = gcra(KEYS[1], rpm, 1)
  if not rOK then refuse(1, r) end
end
if tpm > 0 then
  tOK, tTAT, r = gcra(KEYS[2], tpm, cost)
  if cost > tpm then refuse(2, 0); if refused == 2 then large = 1 end
  elseif not tOK then refuse(2, r) end
end
if lday > 0 and tonumber(redis.call('GET', KEYS[3]) or '0') + cost > lday then refuse(3, tonumber(ARGV[7]) - now) end
if lmonth > 0 and tonumber(redis.call('GET', KEYS[4]) or '0') + cost > lmonth then refuse(4, tonumber(ARGV[8]) - now) end
if lconc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
  if redis.call('ZCARD', KEYS[5]) >= lconc then refuse(5, 1000) end
end
if refused == 0 then
  if rpm > 0 then redis.call('SET', KEYS[1], string.format('%.3f', rTAT), 'PX', math.ceil(rTAT - now) + 1000) end
  if tpm > 0 then redis.call('SET', KEYS[2], string.format('%.3f', tTAT), 'PX', math.ceil(tTAT - now) + 1000) end
  if lday > 0 then redis.call('INCRBY', KEYS[3], cost); redis.call('PEXPIREAT', KEYS[3], tonumber(ARGV[7]) + 86400000) end
  if lmonth > 0 then redis.call('INCRBY', KEYS[4], cost); redis.call('PEXPIREAT', KEYS[4], tonumber(ARGV[8]) + 86400000) end
  if lconc > 0 then redis.call('ZADD', KEYS[5], now + tonumber(ARGV[10]), ARGV[9]); redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[10])) end
end
if refused ~= 0 then
  rTAT = tonumber(redis.call('GET', KEYS[1]) or '0')
  tTAT = tonumber(redis.call('GET', KEYS[2]) or '0')
end
if rpm > 0 then out[4], out[5] = window(rTAT, rpm) end
if tpm > 0 then out[6], out[7] = window(tTAT, tpm) end
out[1], out[2], out[3] = refused, math.ceil(retry), large
return out
`)

// settleScript is memory.settle: settleRate on the tokens per minute, the quotas charged the
// difference, the concurrency slot released. KEYS as admitScript's but rpm; ARGV: the tokens
// per minute limit, the difference, the day's and the month's end (Unix ms), the request id,
// whether the day and month quotas are counted (1/0).
var settleScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tpm, delta = tonumber(ARGV[1]), tonumber(ARGV[2])
if tpm > 0 and delta ~= 0 then
  local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
  if tat < now then tat = now end
  tat = tat + delta * 60000 / tpm
  if tat > now then redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil(tat - now) + 1000)
  else redis.call('DEL', KEYS[1]) end
end
if delta ~= 0 and ARGV[6] == '1' then redis.call('INCRBY', KEYS[2], delta); redis.call('PEXPIREAT', KEYS[2], tonumber(ARGV[3]) + 86400000) end
if delta ~= 0 and ARGV[7] == '1' then redis.call('INCRBY', KEYS[3], delta); redis.call('PEXPIREAT', KEYS[3], tonumber(ARGV[4]) + 86400000) end
redis.call('ZREM', KEYS[4], ARGV[5])
return 1
`)

// leaseMs is how long a concurrency slot lives in Redis when its request is never settled (its
// replica died): the proxy's longest wait for a non-streaming answer.
const leaseMs = int64(30 * time.Minute / time.Millisecond)

// redisStore counts limits in Redis, shared by every replica.
type redisStore struct {
	c       *redis.Client
	timeout time.Duration
	// queue holds the settlements a worker sends in pipelined batches, off the requests' path;
	// done stops the worker. failed and settled report each batch's result (the limiter's
	// metrics and log).
	queue   chan settlement
	done    chan struct{}
	failed  func(error)
	settled func(int)
}

// settlement is one request's charge, waiting for the worker.
type settlement struct {
	t    *Ticket
	used int64
}

// settleQueue bounds the settlements waiting (about 200 bytes each): a fuller queue makes
// Settle send its own, so memory never grows with a slow Redis.
const settleQueue = 4096

// settleBatch is the most settlements one pipelined round trip carries.
const settleBatch = 128

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
	s := &redisStore{c: redis.NewClient(o), timeout: t, queue: make(chan settlement, settleQueue), done: make(chan struct{}),
		failed: func(error) {}, settled: func(int) {}}
	go s.settleLoop()
	return s
}

func (s *redisStore) admit(t *Ticket, _ time.Time) (Verdict, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	l := t.limits
	res, err := admitScript.Run(ctx, s.c, []string{t.rpmKey(), t.tpmKey(), t.dayKey(), t.monthKey(), t.concKey()},
		l.RequestsPerMinute, l.TokensPerMinute, l.TokensPerDay, l.TokensPerMonth, l.ConcurrentRequests,
		t.reserved, t.day.end.UnixMilli(), t.month.end.UnixMilli(), t.id, leaseMs).Int64Slice()
	if err != nil {
		return Verdict{}, err
	}
	if len(res) != 7 {
		return Verdict{}, fmt.Errorf("limits script answered %d values, want 7", len(res))
	}
	v := Verdict{Allowed: res[0] == 0, TooLarge: res[2] == 1}
	if !v.Allowed {
		if res[0] < 1 || int(res[0]) > len(allLimits) {
			return Verdict{}, errors.New("limits script named an unknown limit")
		}
		v.Refused, v.RetryAfter = allLimits[res[0]-1], time.Duration(res[1])*time.Millisecond
	}
	if l.RequestsPerMinute > 0 {
		v.Requests = Window{Set: true, Limit: l.RequestsPerMinute, Remaining: res[3], Reset: time.Duration(res[4]) * time.Millisecond}
	}
	if l.TokensPerMinute > 0 {
		v.Tokens = Window{Set: true, Limit: l.TokensPerMinute, Remaining: res[5], Reset: time.Duration(res[6]) * time.Millisecond}
	}
	return v, nil
}

// settle queues the charge for the worker (synchronously when the queue is full).
//
// Note: a settlement is not on the request's path: the answer is complete, and a keep-alive
// client's next request should not wait for a round trip to Redis. The worker sends what
// queued meanwhile in one pipelined round trip, so under load settlements cost Redis one round
// trip per batch, not per request. A request admitted right after another's answer may not yet
// see its charge (a few milliseconds).
func (s *redisStore) settle(t *Ticket, used int64) error {
	select {
	case s.queue <- settlement{t, used}:
		return nil
	default:
		err := s.send([]settlement{{t, used}})
		if err == nil {
			s.settled(1)
		}
		return err
	}
}

func (s *redisStore) settleLoop() {
	batch := make([]settlement, 0, settleBatch)
	for {
		select {
		case <-s.done:
			return
		case first := <-s.queue:
			batch = append(batch[:0], first)
		more:
			for len(batch) < settleBatch {
				select {
				case next := <-s.queue:
					batch = append(batch, next)
				default:
					break more
				}
			}
			if err := s.send(batch); err != nil {
				s.failed(err)
				continue
			}
			s.settled(len(batch))
		}
	}
}

// send runs settleScript for each settlement in one pipeline; a Redis that lost its scripts (a
// restart) gets them loaded again and the batch once more.
func (s *redisStore) send(batch []settlement) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	run := func() error {
		pipe := s.c.Pipeline()
		for _, b := range batch {
			t, l := b.t, b.t.limits
			settleScript.EvalSha(ctx, pipe, []string{t.tpmKey(), t.dayKey(), t.monthKey(), t.concKey()},
				l.TokensPerMinute, b.used-t.reserved, t.day.end.UnixMilli(), t.month.end.UnixMilli(), t.id,
				counted(l.TokensPerDay), counted(l.TokensPerMonth))
		}
		_, err := pipe.Exec(ctx)
		return err
	}
	err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if err = settleScript.Load(ctx, s.c).Err(); err == nil {
			err = run()
		}
	}
	return err
}

// counted is "1" when a quota is set: the script charges only the quotas that are.
func counted(quota int64) string {
	if quota > 0 {
		return "1"
	}
	return "0"
}

func (s *redisStore) close() error {
	close(s.done)
	return s.c.Close()
}

// quiet drops go-redis's own log lines: plain text on stderr would break the proxy's JSON log,
// and the limiter says once per change of state (a JSON line) that the store fails.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }
