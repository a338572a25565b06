/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// batchScript renews, settles and then admits any number of one client's requests of one
// replica in one atomic step: memory.settle for the settlements, then gcra, the quotas and the
// concurrency of memory.admit for the admissions, in order, each seeing the ones before it. It
// runs on Redis's own clock (TIME), so that replicas with skewed clocks still share one rate, and
// checks every limit of an admission before it counts it, so a refused request costs nothing.
//
// KEYS: rpm, tpm, leases, allowances, void leases, then the quota counters (a day's or a
// month's) the entries name. ARGV: the requests per minute, tokens per minute and concurrent
// limits (0: none), the lease (ms), whether the call's admissions get a lease (1/0); the number
// of quota counters, then per counter its limit and its period's end (Unix ms); the renewals:
// their number, then per renewal a lease and 0, or an allowance's id and its requests in flight;
// the settlements: their number, then per settlement its lease (or allowance), its difference
// (used - reserved), its day and month counters (1-based, 0: not counted) and its kind (0: a
// lease; -1: a lease refunded because its admission's round trip failed, void should Redis run
// that admission later; n > 0: the sum of n requests admitted from that allowance); the
// allowances given back: their number, then per allowance its id, the admissions left, its
// tokens left and its day and month counters; the admissions: their number, the sum and the
// largest of their reservations, that sum per quota counter, the allowance asked for
// (admissions, tokens, its day and month counters, the fewest admissions worth granting, its id;
// 0 admissions: none), then per admission its reservation, its day and month counters and its
// lease.
//
// It returns {-1, now (Unix ms), the requests' and the tokens' arrival time before the first
// admission (Unix µs), the allowance granted (admissions, tokens; 0 0: none)} when every
// admission fits (the common case: call.fastPath), else per admission {refused (0, or 1-based in
// allLimits order), retry ms, too large (0/1), requests remaining, requests reset ms, tokens
// remaining, tokens reset ms}.
//
// Note: every counter is read once and written once per call, whatever the number of requests
// (a quota counter's expiry is set when the counter is created, at the period's end plus a day),
// and, unless a limit is reached, the Lua arithmetic is the same for one request as for a
// hundred: the proxy sends the batch's sums, and works out each admission's headers from the
// arrival times the script returns. A call then costs Redis its commands (and their
// append-only-file records), so a batch costs about what one request did. (Walking each entry
// in Lua and answering seven numbers per admission cost Redis 3.1 µs per request at batches of
// 30, BenchmarkRedisAdmitSettle; on the sums, 1.4 µs.)
//
// Note: every request of a client with a concurrency or a token limit that Redis admits has a
// lease of its own, a member of the sorted set "leases" scored by its end, that only its request
// renews (renew.go); an allowance's slots (the admissions it has left and its requests still in
// flight) are one field of the hash "allowances", with an end its requests renew. The
// concurrent requests are the leases and allowance slots that have not ended, so a request whose
// settlement never arrived (a failed round trip, a replica that died) frees its slot when its
// lease ends, whatever its replica does meanwhile (an allowance's request: when the last of that
// allowance's requests ended). A settlement counts only when it removes its lease (or finds its
// allowance), and an allowance given back only once: a settlement sent twice (its answer was
// lost, and it was sent again) or one whose counters Redis lost (a restart without its file,
// FLUSHALL) changes nothing. A quota counter never goes below 0. (A lease per allowance slot, a
// member each, cost Redis 4.7 µs per request in BenchmarkRedisAdmitSettle; one field per
// allowance, 2 µs; one count per replica, before leases, 0.5 µs.)
var batchScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local period = 60000
local rpm, tpm, lconc, lease, track = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local leases, grants = KEYS[3], KEYS[4]
local i = 6
local nq = tonumber(ARGV[i]); i = i + 1
local qlim, qend, qused, qdelta = {}, {}, {}, {}
for q = 1, nq do qlim[q], qend[q], qdelta[q] = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), 0; i = i + 2 end
local function quota(q)
  if qused[q] == nil then qused[q] = tonumber(redis.call('GET', KEYS[5 + q]) or '0') end
  return qused[q] + qdelta[q]
end
local rTAT, tTAT, rSet, tSet
local function rtat() if rTAT == nil then rTAT = tonumber(redis.call('GET', KEYS[1]) or '0') end return rTAT end
local function ttat() if tTAT == nil then tTAT = tonumber(redis.call('GET', KEYS[2]) or '0') end return tTAT end
local leased = false
local function hold(m) redis.call('ZADD', leases, now + lease, m); leased = true end
-- An allowance's slots are one field of grants, "slots:end:given back (0/1)": its admissions
-- not yet made and its requests still in flight.
-- They are read once and written once per call (gcache, written at the end).
local gcache, gdirty = {}, {}
local function parse(v)
  local n, e, b = string.match(v, '^(-?%d+):(%d+):(%d)$')
  return {tonumber(n), tonumber(e), b == '1'}
end
local function grant(id)
  if gcache[id] == nil then
    local v = redis.call('HGET', grants, id)
    gcache[id] = v and parse(v) or false
  end
  return gcache[id] or nil
end
local function setGrant(id, g) gcache[id], gdirty[id] = g, true end

local nr = tonumber(ARGV[i]); i = i + 1
for r = 1, nr do
  local m, n = ARGV[i], tonumber(ARGV[i + 1]); i = i + 2
  if n == 0 then hold(m)
  else
    local g = grant(m) or {n, 0, true} -- lost (a restart without its file, FLUSHALL): its requests in flight count again
    g[2] = now + lease
    setGrant(m, g)
  end
end
local ns, sdelta = tonumber(ARGV[i]), 0; i = i + 1
for s = 1, ns do
  local m, d, qa, qb, kind = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]); i = i + 5
  if kind == -1 then redis.call('ZADD', KEYS[5], now + lease, m); redis.call('PEXPIRE', KEYS[5], lease) end
  local counted = false
  if kind > 0 then
    local g = grant(m)
    if g then g[1] = g[1] - kind; setGrant(m, g); counted = true end
  else counted = redis.call('ZREM', leases, m) == 1 end
  if counted then
    sdelta = sdelta + d
    if qa > 0 then qdelta[qa] = qdelta[qa] + d end
    if qb > 0 then qdelta[qb] = qdelta[qb] + d end
  end
end
local nf, rr = tonumber(ARGV[i]), 0; i = i + 1
for f = 1, nf do
  local id, left, tok, qa, qb = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]); i = i + 5
  local g = grant(id)
  if g and not g[3] then
    rr, sdelta = rr + left, sdelta - tok
    if qa > 0 then qdelta[qa] = qdelta[qa] - tok end
    if qb > 0 then qdelta[qb] = qdelta[qb] - tok end
    g[1], g[3] = g[1] - left, true
    setGrant(id, g)
  end
end
if sdelta ~= 0 and tpm > 0 then tTAT = math.max(math.max(ttat(), now) + sdelta * period / tpm, now); tSet = true end
if rr > 0 and rpm > 0 then rTAT = math.max(rtat() - rr * period / rpm, now); rSet = true end

local na, asum, amax = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]); i = i + 3
local aq = {}
for q = 1, nq do aq[q] = tonumber(ARGV[i]); i = i + 1 end
local lr, lt, lqa, lqb, lmin, aid = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]), ARGV[i + 5]; i = i + 6
local inflight = 0
-- void: the admissions whose callers were refunded before Redis ran them (their round trip
-- failed and the refund overtook them): they are not counted.
local void = {}
local fits = na > 0
if track == 1 and na > 0 then
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  if lconc > 0 then
    inflight = redis.call('ZCARD', leases)
    local all = redis.call('HGETALL', grants)
    for f = 1, #all, 2 do
      local g = gcache[all[f]]
      if g == nil then g = parse(all[f + 1]); gcache[all[f]] = g end
      if g and g[2] > now then inflight = inflight + math.max(g[1], 0)
      elseif g then redis.call('HDEL', grants, all[f]); gcache[all[f]], gdirty[all[f]] = false, nil end
    end
  end
  if redis.call('EXISTS', KEYS[5]) == 1 then
    redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
    for a = 1, na do
      if redis.call('ZSCORE', KEYS[5], ARGV[i + 4 * a - 1]) then void[a], fits = true, false end
    end
  end
end
local out = {}
local function window(tat, limit)
  tat = math.max(tat, now)
  return math.floor((period - (tat - now)) / (period / limit)), math.ceil(tat - now)
end
-- Every admission fits: admit them all at once; the proxy works out each one's headers.
if fits and rpm > 0 and math.max(rtat(), now) + na * period / rpm - now > period then fits = false end
if fits and tpm > 0 and (amax > tpm or math.max(ttat(), now) + asum * period / tpm - now > period) then fits = false end
for q = 1, nq do if fits and aq[q] > 0 and quota(q) + aq[q] > qlim[q] then fits = false end end
if fits and lconc > 0 and inflight + na > lconc then fits = false end
if fits then
  local rb, tb = 0, 0
  if rpm > 0 then rb = math.max(rtat(), now); rTAT, rSet = rb + na * period / rpm, true end
  if tpm > 0 then tb = math.max(ttat(), now); tTAT, tSet = tb + asum * period / tpm, true end
  for q = 1, nq do qdelta[q] = qdelta[q] + aq[q] end
  if track == 1 then for a = 1, na do hold(ARGV[i + 3]); i = i + 4 end end
  inflight = inflight + na
  -- An allowance: admissions the replica may make alone, counted here now as if made, when they
  -- are a small share of what remains of every limit (allowance.go).
  local g, gt = lr, 0
  if g > 0 and rpm > 0 then g = math.min(g, math.floor((period - (rTAT - now)) * rpm / period / 16)) end
  if g > 0 and lconc > 0 then g = math.min(g, math.floor((lconc - inflight) / 16)) end
  if g > 0 and (tpm > 0 or lqa > 0 or lqb > 0) then
    gt = lt
    if tpm > 0 then gt = math.min(gt, math.floor((period - (tTAT - now)) * tpm / period / 16)) end
    if lqa > 0 then gt = math.min(gt, math.floor((qlim[lqa] - quota(lqa)) / 256)) end
    if lqb > 0 then gt = math.min(gt, math.floor((qlim[lqb] - quota(lqb)) / 256)) end
    if gt < amax then g = 0 end
  end
  if g < lmin then g, gt = 0, 0 end
  if g > 0 then
    if rpm > 0 then rTAT = rTAT + g * period / rpm end
    if tpm > 0 and gt > 0 then tTAT = tTAT + gt * period / tpm end
    if lqa > 0 then qdelta[lqa] = qdelta[lqa] + gt end
    if lqb > 0 then qdelta[lqb] = qdelta[lqb] + gt end
    setGrant(aid, {g, now + lease, false})
  end
  out = {-1, now, math.floor(rb * 1000), math.floor(tb * 1000), g, gt}
else
  for a = 1, na do
    local cost, qa, qb, m = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3]; i = i + 4
    local refused, retry, large, nr, nt = 0, 0, 0, 0, 0
    if void[a] then refused = 5 end
    if rpm > 0 then
      nr = math.max(rtat(), now) + period / rpm
      if nr - now > period then refused, retry = 1, nr - period - now end
    end
    if tpm > 0 then
      nt = math.max(ttat(), now) + cost * period / tpm
      if cost > tpm then
        if refused == 0 then refused, retry, large = 2, 0, 1 end
      elseif nt - now > period and refused == 0 then refused, retry = 2, nt - period - now end
    end
    if refused == 0 and qa > 0 and quota(qa) + cost > qlim[qa] then refused, retry = 3, qend[qa] - now end
    if refused == 0 and qb > 0 and quota(qb) + cost > qlim[qb] then refused, retry = 4, qend[qb] - now end
    if refused == 0 and lconc > 0 and inflight >= lconc then refused, retry = 5, 1000 end
    if refused == 0 then
      if rpm > 0 then rTAT, rSet = nr, true end
      if tpm > 0 then tTAT, tSet = nt, true end
      if qa > 0 then qdelta[qa] = qdelta[qa] + cost end
      if qb > 0 then qdelta[qb] = qdelta[qb] + cost end
      if track == 1 then hold(m) end
      inflight = inflight + 1
    end
    local o = #out
    out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6], out[o + 7] = refused, math.ceil(retry), large, -1, 0, -1, 0
    if rpm > 0 then out[o + 4], out[o + 5] = window(rtat(), rpm) end
    if tpm > 0 then out[o + 6], out[o + 7] = window(ttat(), tpm) end
  end
end

if rSet then redis.call('SET', KEYS[1], string.format('%.3f', rTAT), 'PX', math.ceil(rTAT - now) + 1000) end
if tSet then
  if tTAT > now then redis.call('SET', KEYS[2], string.format('%.3f', tTAT), 'PX', math.ceil(tTAT - now) + 1000)
  else redis.call('DEL', KEYS[2]) end
end
for q = 1, nq do
  if qdelta[q] ~= 0 then
    local v = redis.call('INCRBY', KEYS[5 + q], qdelta[q])
    if v == qdelta[q] then redis.call('PEXPIREAT', KEYS[5 + q], qend[q] + 86400000) end
    if v < 0 then redis.call('SET', KEYS[5 + q], 0, 'KEEPTTL') end
  end
end
if leased then redis.call('PEXPIRE', leases, lease) end
local granted = false
for id in pairs(gdirty) do
  local g = gcache[id]
  if g[1] <= 0 and g[3] then redis.call('HDEL', grants, id)
  else redis.call('HSET', grants, id, string.format('%d:%d:%d', g[1], g[2], g[3] and 1 or 0)); granted = true end
end
if granted then redis.call('PEXPIRE', grants, lease) end
return out
`)

// lease is how long an admitted request's lease lives in Redis unless its request renews it
// (renew.go): a request whose settlement never arrived frees its concurrency slot by then. A
// variable for the tests that wait one out.
var lease = 30 * time.Second

// resultWidth is how many values batchScript returns per admission.
const resultWidth = 7

// call is one client's part of a batch: the renewals, settlements and admissions of tickets
// with the same counters (key) and limits, sent as one batchScript call.
type call struct {
	key     string
	limits  routingv1.Limits
	renews  []*Ticket
	settles []settlement
	admits  []*admission
	quotas  []quotaCounter
	// refunds are allowances given back, ask the admissions of an allowance asked for (0:
	// none) and askID its id, granted the one the answer gave (allowance.go).
	refunds []*allowance
	ask     int64
	askID   string
	granted *allowance
}

// groupCalls splits a batch into one call per client and limits, in the order they first appear;
// each renewal and allowance given back goes in its client's call.
//
// Note: a client's tickets normally share one call; a reload that changed its limits while
// requests were in flight gives it two (the old limits settle what they admitted).
func groupCalls(admits []*admission, settles []settlement, refunds []*allowance, renews ...*Ticket) []*call {
	var calls []*call
	find := func(t *Ticket) *call {
		for _, c := range calls {
			if c.key == t.key && c.limits == t.limits {
				return c
			}
		}
		c := &call{key: t.key, limits: t.limits}
		calls = append(calls, c)
		return c
	}
	for _, t := range renews {
		c := find(t)
		c.renews = append(c.renews, t)
	}
	for _, s := range settles {
		c := find(s.t)
		c.settles = append(c.settles, s)
	}
	for _, a := range admits {
		c := find(a.t)
		c.admits = append(c.admits, a)
	}
	for _, r := range refunds {
		c := find(r.t)
		c.refunds = append(c.refunds, r)
	}
	return calls
}

// quotaCounter is one of a call's quota counters (a day's or a month's) and what the call's
// admissions add to it.
type quotaCounter struct {
	kind       byte
	id, key    string
	limit, end int64
	admitted   int64
}

// quota is a ticket's day (kind 'd') or month ('m') counter among c's, added on first use, with
// its 1-based index in the script's keys; nil and 0 when the limit is not set (the script then
// neither reads nor writes it). The counter's name is built only on first use: a batch's
// tickets almost always share it.
func (c *call) quota(limit int64, kind byte, t *Ticket) (*quotaCounter, int) {
	if limit <= 0 {
		return nil, 0
	}
	p, key := t.day, t.dayKey
	if kind == 'm' {
		p, key = t.month, t.monthKey
	}
	for i := range c.quotas {
		if q := &c.quotas[i]; q.kind == kind && q.id == p.id {
			return q, i + 1
		}
	}
	c.quotas = append(c.quotas, quotaCounter{kind: kind, id: p.id, key: key(), limit: limit, end: p.end.UnixMilli()})
	return &c.quotas[len(c.quotas)-1], len(c.quotas)
}

// counters are the 1-based indexes of t's day and month counters among c's (0: not counted).
func (c *call) counters(t *Ticket) (int, int) {
	_, d := c.quota(c.limits.TokensPerDay, 'd', t)
	_, m := c.quota(c.limits.TokensPerMonth, 'm', t)
	return d, m
}

// encode is batchScript's KEYS and ARGV for c: the renewals' and settlements' leases, the
// admissions as their sums and one by one.
func (c *call) encode() ([]string, []any) {
	l := c.limits
	// A renewal per lease, and one per allowance with its requests in flight.
	renews := make([]any, 1, 1+2*len(c.renews))
	var grants []string
	inGrant := map[string]int{}
	for _, t := range c.renews {
		if t.grant != "" {
			if inGrant[t.grant] == 0 {
				grants = append(grants, t.grant)
			}
			inGrant[t.grant]++
			continue
		}
		renews = append(renews, t.lease, 0)
	}
	for _, g := range grants {
		renews = append(renews, g, inGrant[g])
	}
	renews[0] = (len(renews) - 1) / 2
	// A settlement per lease; those of an allowance's requests as one sum per allowance.
	type grantSums struct {
		id         string
		day, month int
		n, delta   int64
	}
	sums, order := map[string]*grantSums{}, []*grantSums(nil)
	settles := make([]any, 1, 1+5*len(c.settles))
	for _, s := range c.settles {
		d, m := c.counters(s.t)
		if s.t.grant != "" {
			g := sums[s.t.grant]
			if g == nil {
				g = &grantSums{id: s.t.grant, day: d, month: m}
				sums[s.t.grant], order = g, append(order, g)
			}
			g.n, g.delta = g.n+1, g.delta+s.used-s.t.reserved
			continue
		}
		kind := 0
		if s.void {
			kind = -1
		}
		settles = append(settles, s.t.lease, s.used-s.t.reserved, d, m, kind)
	}
	for _, g := range order {
		settles = append(settles, g.id, g.delta, g.day, g.month, g.n)
	}
	settles[0] = (len(settles) - 1) / 5
	// What the allowances given back return: their requests' slots and rate, their tokens to the
	// periods they were charged to.
	refunds := make([]any, 0, 1+5*len(c.refunds))
	refunds = append(refunds, len(c.refunds))
	for _, r := range c.refunds {
		d, m := c.counters(r.t)
		refunds = append(refunds, r.id, r.requests, r.tokens, d, m)
	}
	entries := make([]any, 0, 4*len(c.admits))
	var asum, amax int64
	var askQuota [2]int // the day's and month's counters an allowance's tokens go to: the last admission's
	for _, a := range c.admits {
		n := a.t.reserved
		asum, amax = asum+n, max(amax, n)
		d, m := c.counters(a.t)
		for _, q := range []int{d, m} {
			if q > 0 {
				c.quotas[q-1].admitted += n
			}
		}
		entries = append(entries, n, d, m, a.t.lease)
		askQuota = [2]int{d, m}
	}
	t := &Ticket{key: c.key, limits: l}
	keys := []string{t.rpmKey(), t.tpmKey(), t.leasesKey(), t.grantsKey(), t.voidKey()}
	track := 0
	if t.leased() || l.ConcurrentRequests > 0 {
		track = 1
	}
	args := []any{l.RequestsPerMinute, l.TokensPerMinute, l.ConcurrentRequests, lease.Milliseconds(), track, len(c.quotas)}
	for _, q := range c.quotas {
		keys, args = append(keys, q.key), append(args, q.limit, q.end)
	}
	args = append(append(append(args, renews...), settles...), refunds...)
	args = append(args, len(c.admits), asum, amax)
	for _, q := range c.quotas {
		args = append(args, q.admitted)
	}
	args = append(args, c.ask, c.ask*amax, askQuota[0], askQuota[1], minAllowance, c.askID)
	return keys, append(args, entries...)
}

// fastPath is batchScript's answer when every admission of c fit: each one's verdict, its
// headers worked out as the script's per-admission path would (gcra's window after it).
func (c *call) fastPath(res []int64) []Verdict {
	l := c.limits
	now := float64(res[1])
	at := arrivals{requests: float64(res[2]) / 1000, tokens: float64(res[3]) / 1000}
	out := make([]Verdict, len(c.admits))
	for i, a := range c.admits {
		out[i] = at.admit(l, a.t.reserved, now)
	}
	if res[4] > 0 {
		c.granted = &allowance{t: c.admits[len(c.admits)-1].t, id: c.askID, requests: res[4], tokens: res[5], at: at, redisNow: now}
	}
	return out
}

// verdict reads one admission's values of batchScript's answer.
func verdict(l routingv1.Limits, res []int64) (Verdict, error) {
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

// answers reads a call's answer into its admissions' verdicts.
func (c *call) answers(cmd *redis.Cmd) ([]Verdict, error) {
	res, err := cmd.Int64Slice()
	if err != nil {
		return nil, err
	}
	if len(c.admits) > 0 && len(res) == 6 && res[0] == -1 {
		return c.fastPath(res), nil
	}
	if len(res) != resultWidth*len(c.admits) {
		return nil, fmt.Errorf("limits script answered %d values for %d admissions, want %d each", len(res), len(c.admits), resultWidth)
	}
	out := make([]Verdict, len(c.admits))
	for i := range c.admits {
		if out[i], err = verdict(c.limits, res[i*resultWidth:(i+1)*resultWidth]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
