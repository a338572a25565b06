/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/test/envtest/testenv"
)

// planeOptions change the control plane startPlane starts, for the peer comparison (Peer).
type planeOptions struct {
	// crds is a folder of CRDs installed instead of the operator's (LLMKube's own).
	crds string
	// audit, when set, makes the API server write an audit log of the operator's user.
	audit *auditLog
	// observe are the kinds the observer watches; nil is every kind waitConverged counts.
	observe []client.Object
}

// startPlane starts a fresh control plane (kube-apiserver and etcd, with the operator's CRDs)
// and the benchmark's clients on it: the user, the observer, the CPU meter of the two processes,
// the API server's request counts and, with an operator binary, the operator process's
// kubeconfig. stop undoes all of it. Main runs on one plane; Fair starts one per phase.
func startPlane(ctx context.Context, o Options) (b *bench, stop func(), err error) {
	env, err := testenv.New()
	if err != nil {
		return nil, nil, err
	}
	if o.plane.crds != "" {
		env.CRDDirectoryPaths = []string{o.plane.crds}
	}
	// The default /24 holds ~250 Services.
	apiArgs := env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	if o.plane.audit != nil {
		apiArgs.Set("audit-policy-file", o.plane.audit.policy).Set("audit-log-path", o.plane.audit.path).
			Set("audit-log-format", "json")
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting the control plane: %w", err)
	}
	var undo []func()
	stop = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	undo = append(undo, func() { _ = env.Stop() })
	fail := func(err error) (*bench, func(), error) {
		stop()
		return nil, nil, err
	}
	if b, err = newBench(ctx, cfg, o); err != nil {
		return fail(err)
	}
	b.env = env
	undo = append(undo, b.stopObserver)
	api, etcd, err := controlPlanePIDs(env)
	if err != nil {
		return fail(err)
	}
	b.cpu = cpuMeter{apiserver: api, etcd: etcd}
	metricsCfg := rest.CopyConfig(cfg)
	metricsCfg.QPS, metricsCfg.Burst, metricsCfg.UserAgent = -1, 0, "bench-metrics"
	if b.apiReqs, err = newAPIServerRequests(metricsCfg); err != nil {
		return fail(err)
	}
	if o.OperatorBinary != "" {
		dir, err := os.MkdirTemp("", "bench-operator-")
		if err != nil {
			return fail(err)
		}
		undo = append(undo, func() { _ = os.RemoveAll(dir) })
		if b.kubeconfigPath, err = b.kubeconfig(ctx, dir); err != nil {
			return fail(err)
		}
	}
	return b, stop, nil
}
