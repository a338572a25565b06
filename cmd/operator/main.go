/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command operator runs the LLMKube operator. Flags and wiring only; behaviour lives in controllers/.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/retry"
	"github.com/llmkube/operator/internal/memlimit"
	"github.com/llmkube/operator/version"
)

type options struct {
	fieldManager            string
	emitScrapeAnnotations   bool
	maxConcurrentReconciles int
	qps                     float64
	burst                   int
	watchNamespaces         string
	legacyFieldManagers     string
	adoptLegacyOwnership    bool
	metricsAddr             string
	probeAddr               string
	pprofAddr               string
	leaderElect             bool
	leaderElectionNamespace string
	devControlPlane         string
	devNode                 string
	devNodePreflight        bool
	applySamples            string
	devDir                  string
	cacheTransform          string
	routerProxyImage        string
	driftRepair             time.Duration
	showVersion             bool
}

func main() {
	var o options
	zapOpts := bindFlags(flag.CommandLine, &o, devPlane{}.available())
	flag.Parse()
	if o.showVersion {
		fmt.Println(version.Version)
		return
	}
	if o.devNodePreflight {
		// Silent: the operator's own start prints the one line that says which nodes it got and why.
		if !o.wantsRealNode() {
			os.Exit(1)
		}
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(zapOpts)))
	if n, limit := memlimit.Apply(); n > 0 {
		ctrl.Log.WithName("setup").Info("memory limit", "containerLimitBytes", n, "goMemLimitBytes", limit)
	}

	if err := run(shutdownContext(), o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// bindFlags registers the operator's flags on fs and returns the logger's options, bound to fs.
//
// Note: the flags of the embedded control plane are registered only where it is linked
// (withDevPlane): a release binary (-tags nodevplane) does not offer flags it cannot honour. The
// logger defaults to production settings (JSON, stack traces from error on, no panic on DPanic);
// --zap-encoder=console is for reading logs in a terminal, as `make run` does.
func bindFlags(fs *flag.FlagSet, o *options, withDevPlane bool) *zap.Options {
	fs.StringVar(&o.fieldManager, "field-manager", ownership.DefaultFieldManager, "Field manager of every write the operator makes.")
	fs.BoolVar(&o.emitScrapeAnnotations, "emit-scrape-annotations", false, "Add prometheus.io/* scrape hints to inference and router pods (an alternative to a PodMonitor; never both).")
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 8, "Reconciles run at once per kind.")
	fs.Float64Var(&o.qps, "kube-api-qps", -1, "Client-side rate limit of API requests per second and resource kind; negative: none, the API server's Priority and Fairness alone paces the operator.")
	fs.IntVar(&o.burst, "kube-api-burst", 100, "Client-side burst of API requests, with a positive --kube-api-qps.")
	fs.DurationVar(&o.driftRepair, "drift-repair", retry.DefaultResync, "How often a converged InferenceService or ModelRouter is reconciled again, to repair drift no watch event carries (a no-op reconcile sends nothing); 0 or negative: never.")
	fs.StringVar(&o.legacyFieldManagers, "legacy-field-managers", strings.Join(ownership.DefaultLegacyFieldManagers, ","), "Comma-separated field managers of the records-based operator, whose Update ownership is migrated once; empty for none.")
	fs.BoolVar(&o.adoptLegacyOwnership, "adopt-legacy-ownership", false, "Also take over pod-template keys that a legacy Update entry owns but no applied-pod-* record lists (pruned when not desired).")
	fs.StringVar(&o.cacheTransform, "cache-transform", controllers.CacheTransformSafe, "What the informer cache drops from objects: safe (last-applied-configuration annotations, and managedFields of metadata-only Secrets; never the managedFields the operator extracts from) or none.")
	fs.StringVar(&o.routerProxyImage, "router-proxy-image", modelrouter.DefaultImage(), "Image of a ModelRouter's proxy when its spec.proxy.image is not set; defaults to the router-proxy of this operator's version.")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces to watch; all when empty.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the metrics endpoint; 0 turns it off.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the health probes.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address of net/http/pprof (e.g. 127.0.0.1:6060); off when empty. make bench profiles the operator through it.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, for more than one replica.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader-election Lease; in a cluster, the namespace the operator runs in when empty. Required with --leader-elect outside a cluster.")
	fs.BoolVar(&o.showVersion, "version", false, "Print the version and exit.")
	if withDevPlane {
		fs.StringVar(&o.devControlPlane, "dev-control-plane", "never", "auto: start an embedded control plane when no cluster is configured; always; never.")
		fs.StringVar(&o.applySamples, "apply-samples", "", "On the embedded control plane, apply the YAML files of this folder once the operator runs.")
		fs.StringVar(&o.devDir, "dev-dir", ".dev", "Where the embedded control plane's kubeconfig is written.")
		fs.StringVar(&o.devNode, "dev-node", "auto", "Nodes of the embedded control plane. auto: a real node (kubelet, containerd, runc) when this machine can run containers and its binaries and the images of build/images are built, else KWOK's fake GPU nodes; kwok: always the fake nodes.")
		fs.BoolVar(&o.devNodePreflight, "dev-node-preflight", false, "Exit 0 when these flags would start an embedded control plane with a real node on this machine, 1 otherwise, and print nothing: make run builds the node and the images when it exits 0.")
	} else {
		o.devDir = ".dev" // where a source checkout's dev cluster would be, to name it when stopped
	}
	zapOpts := &zap.Options{Development: false, TimeEncoder: zapcore.ISO8601TimeEncoder,
		// The keys and level names of log/slog's JSON handler, which the router-proxy logs with:
		// one query ("time", level "ERROR") reads both binaries' logs.
		EncoderConfigOptions: []zap.EncoderConfigOption{func(c *zapcore.EncoderConfig) {
			c.TimeKey, c.LevelKey, c.MessageKey = slog.TimeKey, slog.LevelKey, slog.MessageKey
			c.EncodeLevel = zapcore.CapitalLevelEncoder
		}}}
	zapOpts.BindFlags(fs)
	return zapOpts
}

// localCluster is a running embedded control plane.
type localCluster struct {
	cfg  *rest.Config
	stop func() error
	// nodes is one line that says which nodes the cluster has, and why not a real one.
	nodes string
	// routerProxyImage is the router-proxy image a real node holds; empty with fake nodes.
	routerProxyImage string
}

// embedded says whether these options start the embedded control plane.
func (o options) embedded() bool {
	return o.devControlPlane == "always" || (o.devControlPlane == "auto" && devPlane{}.shouldStart())
}

// wantsRealNode says whether these options start an embedded control plane whose node is real,
// provided its binaries and images are built.
func (o options) wantsRealNode() bool {
	return o.embedded() && o.devNode == "auto" && devPlane{}.nodeFits() == nil
}

func run(ctx context.Context, o options) error {
	setupLog := ctrl.Log.WithName("setup")
	var cfg *rest.Config
	embedded := o.embedded()
	if embedded {
		kubeconfig, err := filepath.Abs(filepath.Join(o.devDir, "kubeconfig"))
		if err != nil {
			return err
		}
		setupLog.Info("no cluster configured: starting the embedded control plane; its state lives in memory and is gone when this process exits")
		local, err := devPlane{}.start(filepath.Join("config", "crd", "bases"), kubeconfig, filepath.Join("build", "images"), o.devNode == "kwok")
		if err != nil {
			return err
		}
		defer func() { _ = local.stop() }()
		cfg = local.cfg
		// The router pods of a real node run the router-proxy image it holds, unless told otherwise.
		if local.routerProxyImage != "" && !flagSet("router-proxy-image") {
			o.routerProxyImage = local.routerProxyImage
		}
		fmt.Printf("\n  Embedded control plane is up. In another shell:\n\n    export KUBECONFIG=%s\n    kubectl get isvc,mr,deploy,svc -A\n\n"+
			"  %s\n"+
			"  Its state lives in memory: everything applied to it is gone when make run stops.\n"+
			"  Unset KUBECONFIG in that shell afterwards (`unset KUBECONFIG`).\n\n", kubeconfig, local.nodes)
		if o.metricsAddr == ":8080" {
			o.metricsAddr = "0" // the default port is often taken on a workstation
		}
		// make run's operator holds the chart's Lease, so that a chart installed on this cluster
		// (make helm-install, docs/dev-cluster.md) waits until this one has stood down.
		if !flagSet("leader-elect") {
			o.leaderElect = true
			if o.leaderElectionNamespace == "" {
				o.leaderElectionNamespace = devLeaseNamespace
			}
		}
	} else {
		var err error
		if cfg, err = ctrl.GetConfig(); err != nil {
			return fmt.Errorf("no cluster configured (set KUBECONFIG, or run `make run` for the embedded control plane): %w", err)
		}
		devKubeconfig, _ := filepath.Abs(filepath.Join(o.devDir, "kubeconfig"))
		if err := checkReachable(cfg, loadingRules(), devKubeconfig); err != nil {
			return err
		}
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	cfg.UserAgent = "llmkube-operator"
	ownership.DecodeAppliesOnce(cfg)

	mgr, err := newManager(cfg, o)
	if err != nil {
		return err
	}
	if embedded && o.applySamples != "" {
		go applySamples(ctx, mgr, o)
	}
	if !embedded {
		setupLog.Info("starting manager", "fieldManager", o.fieldManager)
		return mgr.Start(ctx)
	}
	return runStandingDown(ctx, mgr, o)
}

// runStandingDown runs the manager of make run's operator until Ctrl-C, or until the chart's
// operator is installed on its cluster: then the manager stops (handing the Lease back) and the
// embedded cluster keeps serving the chart's operator until Ctrl-C.
func runStandingDown(ctx context.Context, mgr ctrl.Manager, o options) error {
	setupLog := ctrl.Log.WithName("setup")
	// Writes and the API reader go straight to the API server, so both serve before the
	// manager (and its cache) starts; the chart's Deployment is not in the label-scoped cache.
	if o.leaderElect {
		if err := ensureNamespace(ctx, mgr.GetClient(), o.leaderElectionNamespace); err != nil {
			return fmt.Errorf("creating the Lease's namespace %s: %w", o.leaderElectionNamespace, err)
		}
	}
	mgrCtx, standDown := context.WithCancel(ctx)
	defer standDown()
	chart := make(chan string, 1)
	go func() {
		chart <- standDownForChart(mgrCtx, mgr.GetAPIReader(), standDown, ctrl.Log.WithName("handover"))
	}()
	setupLog.Info("starting manager", "fieldManager", o.fieldManager)
	if err := mgr.Start(mgrCtx); err != nil || ctx.Err() != nil {
		return err
	}
	if found := <-chart; found != "" {
		fmt.Printf("\n  The chart's operator (%s) reconciles this cluster now; this one has stood down.\n"+
			"  The cluster keeps running until Ctrl-C.\n\n", found)
		<-ctx.Done()
	}
	return nil
}

func newManager(cfg *rest.Config, o options) (ctrl.Manager, error) {
	var leaseNamespace string
	if o.leaderElect {
		ns, err := leaderElectionNamespace(o.leaderElectionNamespace, inClusterNamespaceFile)
		if err != nil {
			return nil, err
		}
		leaseNamespace = ns
	}
	scheme := runtime.NewScheme()
	if err := controllers.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cacheOpts, err := controllers.CacheOptions(o.cacheTransform, splitList(o.watchNamespaces))
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "llmkube-operator.inference.llmkube.dev",
		LeaderElectionNamespace: leaseNamespace,
		// A stopping leader (helm upgrade's old pod, a drain) hands the Lease back, so the next
		// replica leads at once instead of waiting out the lease duration. Safe because main
		// exits as soon as the manager returns.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("cache-synced", cacheSynced(mgr.GetCache())); err != nil {
		return nil, err
	}
	if err := controllers.Setup(mgr, controllers.Config{
		FieldManager:            o.fieldManager,
		EmitScrapeAnnotations:   o.emitScrapeAnnotations,
		MaxConcurrentReconciles: o.maxConcurrentReconciles,
		// Not nil even when empty: `--legacy-field-managers=` means no legacy manager at all.
		LegacyFieldManagers:  append([]string{}, splitList(o.legacyFieldManagers)...),
		AdoptLegacyOwnership: o.adoptLegacyOwnership,
		RouterProxyImage:     o.routerProxyImage,
		DriftRepair:          driftRepair(o.driftRepair),
		Namespaces:           splitList(o.watchNamespaces),
	}); err != nil {
		return nil, err
	}
	return mgr, nil
}

// driftRepair maps the flag to controllers.Config.DriftRepair, whose zero means the default.
func driftRepair(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// flagSet says whether the command line set the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func applySamples(ctx context.Context, mgr ctrl.Manager, o options) {
	log := ctrl.Log.WithName("samples")
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return
	}
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		log.Error(err, "client")
		return
	}
	applied, err := devPlane{}.applySamples(ctx, c, o.applySamples, "llmkube-samples")
	if err != nil {
		log.Error(err, "applying samples")
		return
	}
	log.Info("applied samples", "objects", applied)
}
