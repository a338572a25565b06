/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// devLeaseNamespace is where `make run`'s operator holds the leader-election Lease on its
// embedded cluster: the namespace docs/install.md (and `make helm-install`) install the chart in,
// so that the chart's operator, whose Lease has the same name there, waits as a standby until
// `make run`'s operator has stood down, instead of reconciling the same objects beside it.
const devLeaseNamespace = "llmkube-system"

// chartOperatorLabels select the Deployment of the chart's operator (charts/llmkube's
// llmkube.labels): once one exists, the cluster has an operator of its own.
var chartOperatorLabels = client.MatchingLabels{
	"app.kubernetes.io/name":       "llmkube",
	"app.kubernetes.io/component":  "operator",
	"app.kubernetes.io/managed-by": "Helm",
}

// chartPollInterval is how often `make run`'s operator looks for the chart's operator. A list of
// Deployments by label on a dev cluster: cheap, and a handover within two seconds.
const chartPollInterval = 2 * time.Second

// ensureNamespace creates the Lease's namespace when it is missing: leader election cannot create
// a Lease in a namespace that does not exist, and `helm install --create-namespace` accepts one
// that does.
func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// standDownForChart calls standDown once a Deployment of the chart's operator exists on the
// cluster, and returns its namespace and name; it returns empty when ctx ends first. Errors of a
// list (the API server restarting) are retried at the next tick: a dev cluster's operator must
// not stop reconciling because one poll failed.
func standDownForChart(ctx context.Context, c client.Reader, standDown context.CancelFunc, log logr.Logger) (found string) {
	_ = wait.PollUntilContextCancel(ctx, chartPollInterval, true, func(ctx context.Context) (bool, error) {
		var list appsv1.DeploymentList
		if err := c.List(ctx, &list, chartOperatorLabels); err != nil {
			log.V(1).Info("looking for the chart's operator", "error", err.Error())
			return false, nil
		}
		if len(list.Items) == 0 {
			return false, nil
		}
		found = list.Items[0].Namespace + "/" + list.Items[0].Name
		return true, nil
	})
	if found != "" {
		log.Info("the chart's operator is installed: this operator stops reconciling and hands it the Lease; the cluster keeps running until Ctrl-C", "deployment", found, "leaseNamespace", devLeaseNamespace)
		standDown()
	}
	return found
}
