/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// operator is the real manager with the real reconcilers, watching one namespace, with every
// request it sends counted.
type operator struct {
	mu       sync.Mutex
	requests []string // "VERB /path"
	// secretRequests are the requests on Secrets, with their Accept header.
	secretRequests []string
	mgr            ctrl.Manager
	// elected is closed when this replica leads (leader election only).
	elected chan struct{}
	// writeDelay holds every write this long before it is sent (nanoseconds), so that a spec can
	// keep writes in flight.
	writeDelay atomic.Int64
	cancel     context.CancelFunc
	done       chan struct{}
	cfg        controllers.Config
}

// startOperator runs the operator's wiring (controllers.Setup, as the binary does) against the
// test API server until the spec ends. A zero FieldManager means the default.
func startOperator(ns string, cfg controllers.Config) *operator {
	return startOperatorWith(operatorOptions{namespaces: []string{ns}, cfg: cfg})
}

// operatorOptions are the knobs of the specs that need more than one namespace, another API
// server, leader election, or the API server's warnings.
type operatorOptions struct {
	cfg controllers.Config
	// namespaces to watch, as --watch-namespaces; all when empty.
	namespaces []string
	// restConfig of the API server; the suite's when nil.
	restConfig *rest.Config
	// leaderElection in this namespace, with short timings, when not empty.
	leaderElection string
	// warnings receives every warning header the API server sends the operator.
	warnings rest.WarningHandlerWithContext
	// noCleanup leaves stopping to the spec (a replica stopped mid-run).
	noCleanup bool
	// logger of the manager and its controllers; controller-runtime's global one when unset.
	logger *logr.Logger
	// cache changes the manager's cache options (e.g. a cache that never sees a kind, as a
	// lagging one would not).
	cache func(*cache.Options)
}

func startOperatorWith(o operatorOptions) *operator {
	cfg := o.cfg
	if cfg.FieldManager == "" {
		cfg.FieldManager = ownership.DefaultFieldManager
	}
	if cfg.ProbeTransport == nil {
		cfg.ProbeTransport = podNetwork()
	}
	if cfg.MaxConcurrentReconciles == 0 {
		cfg.MaxConcurrentReconciles = 2
	}
	op := &operator{done: make(chan struct{}), cfg: cfg}
	base := o.restConfig
	if base == nil {
		base = cfg0()
	}
	restCfg := rest.CopyConfig(base)
	restCfg.UserAgent = "llmkube-operator-under-test"
	if o.warnings != nil {
		restCfg.WarningHandlerWithContext = o.warnings
	}
	restCfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			op.mu.Lock()
			op.requests = append(op.requests, req.Method+" "+req.URL.Path)
			if strings.Contains(req.URL.Path, "/secrets") {
				op.secretRequests = append(op.secretRequests, req.Method+" "+req.URL.String()+" Accept: "+req.Header.Get("Accept"))
			}
			op.mu.Unlock()
			if d := op.writeDelay.Load(); d > 0 && req.Method != http.MethodGet {
				time.Sleep(time.Duration(d))
			}
			return rt.RoundTrip(req)
		})
	}
	ownership.DecodeAppliesOnce(restCfg)
	// The cache the binary uses, with its default transform, scoped as --watch-namespaces would.
	cacheOpts, err := controllers.CacheOptions(controllers.CacheTransformSafe, o.namespaces)
	Expect(err).NotTo(HaveOccurred())
	if o.cache != nil {
		o.cache(&cacheOpts)
	}
	opts := ctrl.Options{
		Scheme:     testenv.Scheme(),
		Cache:      cacheOpts,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if o.logger != nil {
		opts.Logger = *o.logger
	}
	if o.leaderElection != "" {
		opts.LeaderElection = true
		opts.LeaderElectionID = "llmkube-operator.inference.llmkube.dev"
		opts.LeaderElectionNamespace = o.leaderElection
		opts.LeaseDuration = ptr.To(2 * time.Second)
		opts.RenewDeadline = ptr.To(1500 * time.Millisecond)
		opts.RetryPeriod = ptr.To(300 * time.Millisecond)
		op.elected = make(chan struct{})
	}
	mgr, err := ctrl.NewManager(restCfg, opts)
	Expect(err).NotTo(HaveOccurred())
	if cfg.Namespaces == nil {
		cfg.Namespaces = o.namespaces
	}
	Expect(controllers.Setup(mgr, cfg)).To(Succeed())
	op.mgr = mgr
	ctx, cancel := context.WithCancel(suiteCtx)
	op.cancel = cancel
	go func() {
		defer GinkgoRecover()
		defer close(op.done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	if op.elected != nil {
		go func() {
			select {
			case <-mgr.Elected():
				close(op.elected)
			case <-ctx.Done():
			}
		}()
	}
	if !o.noCleanup {
		DeferCleanup(op.stop)
	}
	return op
}

func (op *operator) stop() {
	op.cancel()
	<-op.done
}

func (op *operator) secretReads() []string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return append([]string(nil), op.secretRequests...)
}

// writes returns the requests that changed something (anything but GET), from index from on.
func (op *operator) writes(from int) []string {
	op.mu.Lock()
	defer op.mu.Unlock()
	var out []string
	for _, r := range op.requests[from:] {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

// requestsSince returns every request from index from on.
func (op *operator) requestsSince(from int) []string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return append([]string(nil), op.requests[from:]...)
}

func (op *operator) mark() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return len(op.requests)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reconciles is how many reconciles of the controller named have finished in this process, from
// controller-runtime's own metric.
func reconciles(controller string) float64 {
	families, err := crmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	var total float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "controller") == controller {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// settle waits until the controller has finished at least n more reconciles than before and then
// stays quiet for a moment, so that a check of "nothing was written" sees everything it caused. An
// operator that never goes quiet (a hot loop) fails here.
func settle(controller string, before float64, n int) {
	Eventually(func() bool {
		start := reconciles(controller)
		time.Sleep(300 * time.Millisecond)
		now := reconciles(controller)
		return now == start && now >= before+float64(n)
	}).WithTimeout(20 * time.Second).WithPolling(10 * time.Millisecond).Should(BeTrue())
}

func cfg0() *rest.Config { return cfg }

// podNetwork stands in for the pod network: EndpointSlices may not hold loopback addresses, so
// stand-in pods get addresses from TEST-NET-1 (192.0.2.0/24) and this transport dials them on
// 127.0.0.1, same port.
func podNetwork() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{Timeout: time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
	}
	return t
}
