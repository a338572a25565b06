/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package limits enforces a router's client limits (docs/limits.md, promises L1...): requests
// and tokens per minute, concurrent requests, and token quotas per UTC day and calendar month.
// It knows nothing of HTTP routing: the proxy asks Admit before it sends a request and Settle
// after the answer, and writes the Verdict's headers.
//
// Rates are a generic cell rate algorithm (GCRA, as go-redis/redis_rate and Envoy's ratelimit
// Redis backends use a single stored timestamp per limit): a limit of N per minute admits a burst
// of N, then one every minute/N, with no window boundary that lets 2N through; its "theoretical
// arrival time" minus now is exactly what OpenAI's x-ratelimit-reset-* headers mean (the time
// until the limit is whole again). Quotas are plain counters per calendar period. The same
// algorithms run in two stores: Redis (one Lua script per admission, one per settlement, so every
// replica shares the limit) and memory (each replica alone).
package limits
