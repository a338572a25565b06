/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command router-proxy is the data plane of a ModelRouter: it reads the routing document the
// operator writes and serves OpenAI-compatible HTTP. Flags and wiring only; the proxy lives in
// internal/routerproxy. The operator's Deployment (controllers/modelrouter) passes these flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/memlimit"
	"github.com/llmkube/operator/internal/routerproxy"
	"github.com/llmkube/operator/internal/routerproxy/balance"
	"github.com/llmkube/operator/internal/routerproxy/engine"
	"github.com/llmkube/operator/internal/routerproxy/prefix"
	"github.com/llmkube/operator/version"
)

func main() {
	var (
		config         = flag.String("config", "/etc/router-proxy/config.json", "The routing document (the ModelRouter's ConfigMap, mounted).")
		listen         = flag.String("listen", ":8080", "Address of the OpenAI-compatible API, /healthz and /readyz.")
		metricsListen  = flag.String("metrics-listen", ":9090", "Address of /metrics.")
		apiKeysDir     = flag.String("api-keys-dir", "", "Directory of client API keys (a mounted Secret, one file per key); no client authentication when empty.")
		apiKeysRefresh = flag.Duration("api-keys-refresh", 5*time.Second, "How often the client API keys are reread.")
		credsDir       = flag.String("credentials-dir", "", "Directory of the backends' credentials Secrets (mounted, a directory per backend named after it).")
		credsRefresh   = flag.Duration("credentials-refresh", 5*time.Second, "How often the backends' credentials are reread.")
		maxBody        = flag.Int64("max-body-bytes", 32<<20, "Largest request body; larger ones get 413.")
		bodyTimeout    = flag.Duration("body-read-timeout", time.Minute, "Longest time to read a request body; a body that does not arrive in time gets 408 and its connection is closed.")
		bodyBudget     = flag.Int64("body-memory-budget", 0, "Most bytes of request bodies held at once; a request whose body does not fit gets 503 with Retry-After before its body is read. 0: half of what GOMEMLIMIT leaves beyond 40 MiB (256 MiB without a limit).")
		headerTimeout  = flag.Duration("read-header-timeout", 10*time.Second, "Longest time a client may take to send its request headers.")
		reqTimeout     = flag.Duration("request-timeout", routerproxy.DefaultRequestTimeout, "Longest wait for a whole non-streaming answer, per attempt (a generation sends its headers only when it is done); a rule's timeout replaces it.")
		idleTimeout    = flag.Duration("stream-idle-timeout", routerproxy.DefaultStreamIdleTimeout, "Longest wait for a stream's headers and between two of its bytes, per attempt (a stream has no total limit); a rule's timeout replaces it.")
		reloadEvery    = flag.Duration("config-reload-interval", 2*time.Second, "How often the mounted routing document is reread; a changed one applies to new requests.")
		threshold      = flag.Int("failure-threshold", 3, "Failures in a row after which a backend cools down.")
		cooldown       = flag.Duration("cooldown", 30*time.Second, "How long a failing backend is skipped, unless it is a request's last option.")
		shutdownDelay  = flag.Duration("shutdown-delay", 5*time.Second, "After SIGTERM, how long readiness fails while requests are still accepted.")
		drain          = flag.Duration("drain-timeout", 30*time.Second, "After the shutdown delay, how long in-flight requests and streams may take to finish.")
		showVersion    = flag.Bool("version", false, "Print the version and the routing document version, then exit.")
		kubeconfig     = flag.String("kubeconfig", "", "Kubeconfig to watch EndpointSlices with; the pod's ServiceAccount (in-cluster config) when empty.")
		syncTimeout    = flag.Duration("endpoints-sync-timeout", 5*time.Second, "How long the proxy waits at start for the EndpointSlices before serving (through the Service URLs until they arrive).")
		podTries       = flag.Int("pod-tries", 3, "Pods one request may try on one backend before its rule's next backend.")
		loadFactor     = flag.Float64("affinity-load-factor", 1.25, "PrefixAffinity: a pod takes the requests of its prefixes while its outstanding requests stay at most this times the mean (> 1).")
		blockBytes     = flag.Int("prefix-block-bytes", prefix.DefaultBlockBytes, "PrefixAffinity: bytes of prompt text per hashed block (about a quarter as many tokens).")
		maxBlocks      = flag.Int("prefix-max-blocks", prefix.DefaultMaxBlocks, "PrefixAffinity: most blocks hashed per request; prompts agreeing on this many blocks are treated as one.")
		redisPassword  = flag.String("redis-password-file", "", "File holding the password of the limits' Redis (a mounted Secret key), read at each new connection.")
		routerName     = flag.String("router-name", "", "The ModelRouter this proxy serves (the operator sets it): every series it exports carries it as the label router, however Prometheus scrapes the pod (a PodMonitor or prometheus.io annotations).")
		blocksPerPod   = flag.Int("prefix-blocks-per-pod", balance.DefaultBlocksPerPod, "PrefixAffinity: block hashes remembered per pod (an LRU standing in for its prefix cache; about 55 bytes each).")
	)
	flag.Parse()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	memoryLimit(log)
	if *showVersion {
		fmt.Println(version.Version, routingv1.Version)
		return
	}
	if *bodyBudget < 0 {
		fail(log, fmt.Errorf("--body-memory-budget must not be negative, not %d", *bodyBudget))
	}
	for name, v := range map[string]int{"prefix-block-bytes": *blockBytes, "prefix-max-blocks": *maxBlocks, "prefix-blocks-per-pod": *blocksPerPod} {
		if v < 1 {
			fail(log, fmt.Errorf("--%s must be at least 1, not %d", name, v))
		}
	}
	data, err := os.ReadFile(*config)
	if err != nil {
		fail(log, err)
	}
	doc, err := routingv1.Parse(data)
	if err != nil {
		fail(log, err)
	}
	reg := prometheus.NewRegistry()
	metrics := registerer(reg, *routerName)
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	transport := routerproxy.NewTransport()
	if testSeams != nil {
		if err := testSeams(transport, log); err != nil {
			fail(log, err)
		}
	}
	balancer := routerproxy.NewBalancer(doc, routerproxy.BalancerOptions{
		FailureThreshold: *threshold, Cooldown: *cooldown, MaxPodTries: *podTries, LoadFactor: *loadFactor, Log: log, Registerer: metrics,
		PrefixBlockBytes: *blockBytes, PrefixMaxBlocks: *maxBlocks, PrefixBlocksPerPod: *blocksPerPod,
	})
	proxy, err := routerproxy.New(routerproxy.Options{
		Document: doc, Getenv: os.Getenv,
		APIKeysDir: *apiKeysDir, APIKeysRefresh: *apiKeysRefresh,
		CredentialsDir: *credsDir, CredentialsRefresh: *credsRefresh,
		MaxBodyBytes: *maxBody, BodyReadTimeout: *bodyTimeout, BodyMemoryBudget: *bodyBudget, RequestTimeout: *reqTimeout, StreamIdleTimeout: *idleTimeout,
		FailureThreshold: *threshold, Cooldown: *cooldown,
		Log: log, Registerer: metrics, Transport: transport, Balancer: balancer, RedisPasswordFile: *redisPassword,
	})
	if err != nil {
		fail(log, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// EngineAware's reads of the pods' metrics dial as requests do (the same transport).
	go engine.NewScraper(&http.Client{Transport: transport}, balancer.EngineTargets, metrics).Run(ctx)
	ew := newEndpointsWatch(log, balancer, *kubeconfig, *syncTimeout)
	ew.follow(ctx)
	dw := routerproxy.NewDocumentWatcher(*config, data, *reloadEvery, proxy, metrics, log)
	dw.Applied = func(*routingv1.Document) { ew.follow(ctx) }
	go dw.Run(ctx)
	srv := &routerproxy.Server{
		Proxy: proxy, Listen: *listen, MetricsListen: *metricsListen, Gatherer: reg,
		ReadHeaderTimeout: *headerTimeout, ShutdownDelay: *shutdownDelay, DrainTimeout: *drain, Log: log,
	}
	log.Info("starting", "version", version.Version, "document", routingv1.Version, "backends", len(doc.Backends), "rules", len(doc.Rules), "clientAuth", *apiKeysDir != "", "bodyMemoryBudgetBytes", proxy.BodyMemoryBudget())
	if err := srv.Run(ctx); err != nil {
		fail(log, err)
	}
}

// testSeams is set by the build tag routerproxy_testseams only (testseams.go): the integration
// tests' address map never ships in the production binary.
var testSeams func(*http.Transport, *slog.Logger) error

// memoryLimit lowers GOMEMLIMIT to 90% of the container's limit (internal/memlimit).
func memoryLimit(log *slog.Logger) {
	if n, limit := memlimit.Apply(); n > 0 {
		log.Info("memory limit", "containerLimitBytes", n, "goMemLimitBytes", limit)
	}
}

func fail(log *slog.Logger, err error) {
	log.Error("router-proxy cannot start", "error", err.Error())
	os.Exit(1)
}

// registerer is where the proxy registers its metrics: reg itself, or, with a router name, reg
// behind the constant label router=name. The label comes from the proxy rather than from a
// scrape's relabelling because not every scrape can add it: Prometheus' usual prometheus.io
// annotation job copies no pod label into router, and the alerts and dashboards group by it.
func registerer(reg *prometheus.Registry, router string) prometheus.Registerer {
	if router == "" {
		return reg
	}
	return prometheus.WrapRegistererWith(prometheus.Labels{"router": router}, reg)
}
