/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/test/legacy"
)

// Upgrade is the operator taking over N InferenceServices whose Deployments and Services the
// records-based operator wrote.
type Upgrade struct {
	N     int `json:"n"`
	Phase `json:",inline"`
	// Dropped is how many of the N had a recorded key the spec no longer sets (every tenth):
	// only their pod templates should change. Rolled is how many pod templates did change.
	Dropped int `json:"dropped"`
	Rolled  int `json:"rolled"`
}

// droppedKey is a pod label the legacy operator recorded on every tenth object although the
// spec no longer sets it: the migration hands it to the operator, whose next apply prunes it.
const droppedKey = "bench-dropped"

// upgrade writes n InferenceServices' Deployments and Services as the records-based operator did,
// then starts the operator process over them and measures until every one is migrated and
// converged.
func (b *bench) upgrade(ctx context.Context, n int) (*Upgrade, error) {
	ns := fmt.Sprintf("upgrade-%d", n)
	if err := b.namespace(ctx, ns); err != nil {
		return nil, err
	}
	defer func() { _ = b.deleteServices(ctx, ns) }()
	b.logf("N=%d upgrade: the records-based operator writes %d Deployments and Services", n, n)
	before := make([]string, n)
	up := &Upgrade{N: n}
	err := parallel(n, b.o.Workers, func(i int) error {
		obj := isvc(ns, i)
		if err := b.user.Create(ctx, obj); err != nil {
			return err
		}
		labels := map[string]string{}
		for k, v := range obj.Spec.PodLabels {
			labels[k] = string(v)
		}
		if i%10 == 0 {
			labels[droppedKey] = "yes"
		}
		ac, err := inferenceservice.Deployment(obj, inferenceservice.Inputs{Replicas: obj.Spec.Replicas})
		if err != nil {
			return err
		}
		// Its desired labels include the dropped key, so that the record lists it.
		ac.Spec.Template.WithLabels(labels)
		dep, err := legacy.WriteDeployment(ctx, b.user, ns, obj.Name, ac, labels, maps.Clone(obj.Spec.PodAnnotations), true)
		if err != nil {
			return err
		}
		before[i] = templateOf(dep)
		_, err = legacy.CreateService(ctx, b.user, inferenceservice.Service(obj))
		return err
	})
	if err != nil {
		return nil, err
	}
	up.Dropped = (n + 9) / 10
	b.logf("N=%d upgrade: the operator process takes over", n)
	w, err := b.openWindow(ctx, nil, "inferenceservice")
	if err != nil {
		return nil, err
	}
	p, err := b.startProcess(ctx, ns, b.o.settings(), b.o.CacheTransform)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	if err := b.waitMigrated(ctx, ns, n, 20*time.Minute); err != nil {
		return nil, err
	}
	ph, err := w.close(ctx, p, n, nil)
	if err != nil {
		return nil, err
	}
	up.Phase = *ph
	deps := &appsv1.DeploymentList{}
	if err := b.observer.List(ctx, deps, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range deps.Items {
		var idx int
		if _, err := fmt.Sscanf(deps.Items[i].Name, "model-%04d", &idx); err == nil && idx < n && templateOf(&deps.Items[i]) != before[idx] {
			up.Rolled++
		}
	}
	b.logf("N=%d upgrade took %s: %d reconciles, %d pod templates changed (%d had a dropped key), requests %v", n, up.Took, up.Reconciles, up.Rolled, up.Dropped, up.Requests)
	return up, nil
}

// waitMigrated waits until no Deployment of ns carries a record annotation any more and every
// InferenceService has a current status.
func (b *bench) waitMigrated(ctx context.Context, ns string, n int, timeout time.Duration) error {
	if err := b.waitConverged(ctx, ns, n, timeout); err != nil {
		return err
	}
	return poll(ctx, timeout, func() bool {
		var deps appsv1.DeploymentList
		if b.observer.List(ctx, &deps, client.InNamespace(ns), client.UnsafeDisableDeepCopy) != nil {
			return false
		}
		for i := range deps.Items {
			if _, ok := deps.Items[i].Annotations[ownership.RecordLabels]; ok {
				return false
			}
			if len(deps.Items[i].OwnerReferences) == 0 {
				return false
			}
		}
		return true
	})
}

// templateOf is a Deployment's pod template as JSON: what rolls pods when it changes.
func templateOf(d *appsv1.Deployment) string {
	data, _ := json.Marshal(d.Spec.Template)
	return string(data)
}
