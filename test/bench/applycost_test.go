/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

// TestApplyCost is a measurement, not a check: the API server's CPU per created Deployment (the
// operator's Deployment of a benchmark pair), by how it is sent: a POST, controller-runtime's apply,
// and that apply through ownership.DecodeAppliesOnce, each twice, the order mirrored, with a CPU
// profile of the API server per round. It runs when BENCH_APPLY_COST names the folder for the
// profiles (docs/benchmarks/README.md, "What one apply costs the API server").
func TestApplyCost(t *testing.T) {
	out := os.Getenv("BENCH_APPLY_COST")
	if out == "" {
		t.Skip("a measurement: set BENCH_APPLY_COST to a folder for its profiles")
	}
	ctx := context.Background()
	b, stop, err := startPlane(ctx, Options{Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cfg := rest.CopyConfig(b.cfg)
	cfg.QPS, cfg.Burst = -1, 100
	cs := kubernetes.NewForConfigOrDie(cfg)
	n := 1000
	// desired is the operator's Deployment of the i-th benchmark pair, as the plan builds it.
	desired := func(ns string, i int) *appsv1ac.DeploymentApplyConfiguration {
		isvc := pairOf(ns, i)
		isvc.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
		d, err := inferenceservice.Deployment(isvc, inferenceservice.Inputs{Replicas: ptr.To[int32](1), Model: modelOf(ns, i)})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	newClient := func(decodeOnce bool) client.Client {
		c := rest.CopyConfig(cfg)
		if decodeOnce {
			ownership.DecodeAppliesOnce(c)
		}
		cl, err := client.New(c, client.Options{Scheme: b.user.Scheme(), Mapper: b.user.RESTMapper()})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	applyWith := func(c client.Client) func(ns string, i int) error {
		return func(ns string, i int) error {
			return c.Apply(ctx, desired(ns, i), client.FieldOwner("op"), client.ForceOwnership)
		}
	}
	variants := map[string]func(ns string, i int) error{
		"post": func(ns string, i int) error {
			// The same object as a typed Deployment: an apply configuration has the same JSON.
			data, err := json.Marshal(desired(ns, i))
			if err != nil {
				return err
			}
			var d appsv1.Deployment
			if err := json.Unmarshal(data, &d); err != nil {
				return err
			}
			_, err = cs.AppsV1().Deployments(ns).Create(ctx, &d, metav1.CreateOptions{FieldManager: "op"})
			return err
		},
		"apply":             applyWith(newClient(false)),
		"apply-decode-once": applyWith(newClient(true)),
	}
	order := []string{"post", "apply", "apply-decode-once", "apply-decode-once", "apply", "post"}
	sum := map[string]time.Duration{}
	for r, name := range order {
		ns := fmt.Sprintf("cost-%d", r)
		if err := b.namespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		b.quiet(ctx, 0.2, 10*time.Second)
		prof, err := startAPIServerProfile(ctx, b.cfg)
		if err != nil {
			t.Fatal(err)
		}
		start := b.cpu.mark(0)
		if err := parallel(n, 8, func(i int) error { return variants[name](ns, i) }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		c := start.to(b.cpu.mark(0))
		if err := prof.stop(filepath.Join(out, fmt.Sprintf("cost-%d-%s.pprof", r, name))); err != nil {
			t.Fatal(err)
		}
		sum[name] += time.Duration(c.APIServer)
		t.Logf("%s: API server %v per object, etcd %v", name, time.Duration(c.APIServer)/time.Duration(n), time.Duration(c.Etcd)/time.Duration(n))
	}
	for name, d := range sum {
		t.Logf("mean %s: %v per object", name, d/time.Duration(2*n))
	}
}
