/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package engine reads what each pod's model server reports about its load (requests waiting
// and running, KV-cache use: the Gateway API Inference Extension's model-server protocol) from
// its Prometheus metrics endpoint, on an interval, and hands it to the pod's balance.Endpoint for
// the engine-aware scorer (internal/routerproxy/balance, engine.go). A read never delays a
// request: requests read the last answer, and each read has a deadline and a bounded body.
package engine
