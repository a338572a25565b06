/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1

import (
	"fmt"
	"regexp"
	"time"
)

// Client is a named client of the router (spec.clients): the keys it sends, the models it may
// use, its limits. The proxy knows a request's client by the key it sent: the name of the file
// (a key of the mounted API key Secret) whose value matched.
type Client struct {
	Name string `json:"name"`
	// SecretKeys are the names of the client's keys in the API key Secret (files of
	// --api-keys-dir).
	SecretKeys []string `json:"secretKeys"`
	// Models are the models the client may use, matched as a rule's models are (MatchModel);
	// every model when empty.
	Models []string `json:"models,omitempty"`
	Limits *Limits  `json:"limits,omitempty"`
}

// Limits are a client's limits; 0 is no limit.
type Limits struct {
	RequestsPerMinute  int64 `json:"requestsPerMinute,omitempty"`
	TokensPerMinute    int64 `json:"tokensPerMinute,omitempty"`
	ConcurrentRequests int64 `json:"concurrentRequests,omitempty"`
	TokensPerDay       int64 `json:"tokensPerDay,omitempty"`
	TokensPerMonth     int64 `json:"tokensPerMonth,omitempty"`
}

// LimitsStore is where the proxy counts the limits. Without Redis each replica counts alone.
type LimitsStore struct {
	Redis *Redis `json:"redis,omitempty"`
	// FailClosed answers 503 when the store does not answer; else the request passes unlimited.
	FailClosed bool `json:"failClosed,omitempty"`
	// KeyPrefix is the prefix of every Redis key of this router (its namespace and name), so
	// that routers sharing a Redis never share a counter.
	KeyPrefix string `json:"keyPrefix,omitempty"`
}

// Redis is the shared store of the limits.
type Redis struct {
	Address string `json:"address"`
	TLS     bool   `json:"tls,omitempty"`
	// ServerName is the name TLS verifies, the address's host when empty.
	ServerName string `json:"serverName,omitempty"`
	// Password says the operator mounted a password: the proxy reads it from its
	// --redis-password-file.
	Password bool `json:"password,omitempty"`
	// Timeout, a Go duration, bounds each call; DefaultRedisTimeout when empty.
	Timeout string `json:"timeout,omitempty"`
}

// DefaultRedisTimeout bounds a call to Redis when the document names no timeout.
const DefaultRedisTimeout = 100 * time.Millisecond

// TimeoutDuration is the Redis call timeout.
func (r *Redis) TimeoutDuration() time.Duration {
	if d, err := time.ParseDuration(r.Timeout); err == nil && d > 0 {
		return d
	}
	return DefaultRedisTimeout
}

var clientName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// validateClients checks what the proxy relies on: unique DNS-label names (they are metric label
// values and Redis key parts) and each key owned by one client.
func (d *Document) validateClients() error {
	names := map[string]bool{}
	keys := map[string]string{}
	for i, c := range d.Clients {
		if !clientName.MatchString(c.Name) || len(c.Name) > 63 {
			return fmt.Errorf("clients[%d] has name %q, not a DNS label", i, c.Name)
		}
		if names[c.Name] {
			return fmt.Errorf("client %q is listed twice", c.Name)
		}
		names[c.Name] = true
		for _, k := range c.SecretKeys {
			if other, ok := keys[k]; ok {
				return fmt.Errorf("secret key %q belongs to clients %q and %q", k, other, c.Name)
			}
			keys[k] = c.Name
		}
		if l := c.Limits; l != nil && (l.RequestsPerMinute < 0 || l.TokensPerMinute < 0 || l.ConcurrentRequests < 0 || l.TokensPerDay < 0 || l.TokensPerMonth < 0) {
			return fmt.Errorf("client %q has a negative limit", c.Name)
		}
	}
	if s := d.Limits; s != nil && s.Redis != nil {
		if s.Redis.Address == "" {
			return fmt.Errorf("limits.redis has no address")
		}
		if s.Redis.Timeout != "" {
			if t, err := time.ParseDuration(s.Redis.Timeout); err != nil || t <= 0 {
				return fmt.Errorf("limits.redis.timeout %q is not a positive duration", s.Redis.Timeout)
			}
		}
	}
	return nil
}
