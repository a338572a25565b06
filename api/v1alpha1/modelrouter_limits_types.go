/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

// This file holds what a ModelRouter says about its clients: who they are (named teams owning
// keys of spec.proxy.apiKeySecretRef), which models they may use, and their limits; and where the
// limits are counted (spec.limits). docs/limits.md describes the behaviour (promises L1...).

// RouterClient is one named client of a router (a team): the keys it authenticates with, the
// models it may use and its limits.
// +kubebuilder:validation:XValidation:rule="!has(self.models) || self.models.all(m, m.size() > 0)",message="spec.clients[].models entries must not be empty"
type RouterClient struct {
	// name identifies the client in metrics (the client label), logs and Redis; unique in the router. A DNS label: lowercase alphanumerics and -, at most 63 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// secretKeys are the keys (data entries) of the Secret named by spec.proxy.apiKeySecretRef whose values this client's requests carry. The key values stay in the Secret; a key belongs to at most one client. At least 1 and at most 16.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[-._a-zA-Z0-9]+$`
	SecretKeys []string `json:"secretKeys"`

	// models are the models this client may use, matched as spec.rules[].models are: an exact name, or a name ending in * for every model starting with the rest. When unset, every model. A request for another model is answered 403 model_not_found. At most 64 names of at most 256 characters.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	Models []string `json:"models,omitempty"`

	// limits bound what this client may use; when unset, nothing is limited (its usage is still counted under its name).
	// +optional
	Limits *ClientLimits `json:"limits,omitempty"`
}

// ClientLimits are a client's limits. Rates are enforced smoothly (a limit of 60 per minute is one
// per second after a burst of 60); quotas are per calendar period in UTC. Tokens are input plus
// output tokens as the backends report them.
type ClientLimits struct {
	// requestsPerMinute is the most requests the client may start per minute.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RequestsPerMinute *int64 `json:"requestsPerMinute,omitempty"`

	// tokensPerMinute is the most input plus output tokens per minute. A request reserves its estimate (prompt bytes / 4 plus max_tokens) before it is sent, and is charged what the backend reported after it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TokensPerMinute *int64 `json:"tokensPerMinute,omitempty"`

	// concurrentRequests is the most requests (streams included) the client may have in flight at once.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ConcurrentRequests *int32 `json:"concurrentRequests,omitempty"`

	// tokensPerDay is the most input plus output tokens per UTC day (the quota renews at 00:00 UTC).
	// +optional
	// +kubebuilder:validation:Minimum=1
	TokensPerDay *int64 `json:"tokensPerDay,omitempty"`

	// tokensPerMonth is the most input plus output tokens per calendar month in UTC (the quota renews at 00:00 UTC on the 1st).
	// +optional
	// +kubebuilder:validation:Minimum=1
	TokensPerMonth *int64 `json:"tokensPerMonth,omitempty"`
}

// LimitsSpec says where the proxy replicas count the clients' limits, and what they do when they
// cannot.
type LimitsSpec struct {
	// redis is a Redis every proxy replica counts in, so that the replicas enforce one shared limit. When unset, each replica enforces every limit alone (the Limits condition says by how many replicas that multiplies them). Run it with appendonly yes, so that a restart keeps the quotas (docs/limits.md).
	// +optional
	Redis *RedisSpec `json:"redis,omitempty"`

	// failureMode is what a replica does when Redis does not answer within its timeout: FailOpen (the default) lets the request through unlimited, counts it in llmkube_router_limits_store_errors_total and logs it; FailClosed answers 503 with Retry-After.
	// +optional
	// +kubebuilder:validation:Enum=FailOpen;FailClosed
	FailureMode *LimitsFailureMode `json:"failureMode,omitempty"`
}

// LimitsFailureMode is what the proxy does when its limits store does not answer.
type LimitsFailureMode string

// Failure modes.
const (
	LimitsFailOpen   LimitsFailureMode = "FailOpen"
	LimitsFailClosed LimitsFailureMode = "FailClosed"
)

// RedisSpec is a Redis server the proxy replicas count limits in.
type RedisSpec struct {
	// address is the server's host:port, for example redis.cache.svc.cluster.local:6379. At most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^\s/]+:[0-9]{1,5}$`
	Address string `json:"address"`

	// tls makes the proxy connect with TLS, verifying the server's certificate against the system roots; serverName overrides the name verified (the address's host by default).
	// +optional
	TLS *RedisTLS `json:"tls,omitempty"`

	// passwordSecretRef names a key of a Secret in the router's namespace holding the password (Redis AUTH). The proxy pods mount that key only.
	// +optional
	PasswordSecretRef *SecretKeySelector `json:"passwordSecretRef,omitempty"`

	// timeout bounds each call to Redis, as a Go duration such as 50ms; a call that takes longer is a failure (see failureMode). Defaults to 100ms.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('5s')",message="spec.limits.redis.timeout must be a positive duration of at most 5s, such as 100ms"
	Timeout *string `json:"timeout,omitempty"`
}

// RedisTLS is how the proxy speaks TLS to Redis.
type RedisTLS struct {
	// serverName is the name the server's certificate must carry; the address's host by default.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerName *string `json:"serverName,omitempty"`
}

// SecretKeySelector names one key, required, of a Secret in the same namespace.
type SecretKeySelector struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key is the key of the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}
