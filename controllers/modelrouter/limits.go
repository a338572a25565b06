/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"fmt"
	"slices"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// The proxy reads the Redis password from RedisPasswordDir/RedisPasswordFile: one key of the
// Secret spec.limits.redis.passwordSecretRef, projected alone (the rest of the Secret stays out
// of the pod).
const (
	RedisPasswordDir  = "/etc/router-proxy-redis"
	RedisPasswordFile = "password"
	redisVolumeName   = "redis-password"
)

// Clients is what the routing document says of the router's clients and of where their limits
// are counted: the one place that decides it (docs/limits.md); the proxy only obeys.
//
// Note: the client entries keep the spec's order and their lists are sorted, so the same spec
// always gives the same bytes; a router without clients and without spec.limits gets neither
// field, so its document is the one an older operator wrote.
func Clients(router *inferencev1alpha1.ModelRouter) ([]routingv1.Client, *routingv1.LimitsStore) {
	var clients []routingv1.Client
	limited := false
	for _, c := range router.Spec.Clients {
		out := routingv1.Client{Name: c.Name, SecretKeys: slices.Sorted(slices.Values(c.SecretKeys))}
		if len(c.Models) > 0 {
			out.Models = slices.Sorted(slices.Values(c.Models))
		}
		if l := c.Limits; l != nil {
			lim := routingv1.Limits{
				RequestsPerMinute:  ptr.Deref(l.RequestsPerMinute, 0),
				TokensPerMinute:    ptr.Deref(l.TokensPerMinute, 0),
				ConcurrentRequests: int64(ptr.Deref(l.ConcurrentRequests, 0)),
				TokensPerDay:       ptr.Deref(l.TokensPerDay, 0),
				TokensPerMonth:     ptr.Deref(l.TokensPerMonth, 0),
			}
			if lim != (routingv1.Limits{}) {
				out.Limits = &lim
				limited = true
			}
		}
		clients = append(clients, out)
	}
	spec := router.Spec.Limits
	if spec == nil && !limited {
		return clients, nil
	}
	store := &routingv1.LimitsStore{KeyPrefix: "llmkube/" + router.Namespace + "/" + router.Name}
	if spec != nil {
		store.FailClosed = ptr.Deref(spec.FailureMode, inferencev1alpha1.LimitsFailOpen) == inferencev1alpha1.LimitsFailClosed
		if r := spec.Redis; r != nil {
			store.Redis = &routingv1.Redis{Address: r.Address, Password: r.PasswordSecretRef != nil, Timeout: ptr.Deref(r.Timeout, "")}
			if r.TLS != nil {
				store.Redis.TLS = true
				store.Redis.ServerName = ptr.Deref(r.TLS.ServerName, "")
			}
		}
	}
	return clients, store
}

// limitsScope says how the router's limits are enforced, for the Limits condition: ok is false
// when there are no limits at all (no condition then).
func limitsScope(router *inferencev1alpha1.ModelRouter) (shared bool, msg string, ok bool) {
	clients, store := Clients(router)
	if store == nil {
		return false, "", false
	}
	n := 0
	for _, c := range clients {
		if c.Limits != nil {
			n++
		}
	}
	mode := "fail-open: while Redis does not answer, requests pass unlimited"
	if store.FailClosed {
		mode = "fail-closed: while Redis does not answer, requests get 503"
	}
	if store.Redis != nil {
		return true, fmt.Sprintf("%d client(s) with limits; every proxy replica counts in Redis %s, so each limit holds across replicas; %s", n, store.Redis.Address, mode), true
	}
	replicas := int32(1)
	if p := router.Spec.Proxy; p != nil {
		replicas = ptr.Deref(p.Replicas, 1)
	}
	return false, fmt.Sprintf("%d client(s) with limits; no spec.limits.redis: each of the %d proxy replicas enforces every limit alone, so up to %d times each limit passes; name a Redis in spec.limits.redis to share them", n, replicas, max(replicas, 1)), true
}

// redisPassword is the volume with the Redis password key and the proxy's flag to read it; nil
// without a password.
func redisPassword(router *inferencev1alpha1.ModelRouter) (*corev1ac.VolumeApplyConfiguration, string) {
	l := router.Spec.Limits
	if l == nil || l.Redis == nil || l.Redis.PasswordSecretRef == nil {
		return nil, ""
	}
	ref := l.Redis.PasswordSecretRef
	vol := corev1ac.Volume().WithName(redisVolumeName).WithSecret(corev1ac.SecretVolumeSource().
		WithSecretName(ref.Name).
		WithItems(corev1ac.KeyToPath().WithKey(ref.Key).WithPath(RedisPasswordFile)))
	return vol, "--redis-password-file=" + RedisPasswordDir + "/" + RedisPasswordFile
}
