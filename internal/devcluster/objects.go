/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GPUResource is the extended resource the fake nodes advertise, as the NVIDIA device plugin does
// on a real GPU node.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// Nodes is how many fake nodes the cluster has.
const Nodes = 3

// kwokNodeAnnotation marks the nodes KWOK plays the kubelet of.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// StorageClassName is the default StorageClass, served by the in-tree hostPath provisioner of
// kube-controller-manager (an empty folder per volume under /tmp/hostpath_pv on this machine,
// never mounted: KWOK runs no container).
const StorageClassName = "standard"

// NodeName is the name of fake node i.
func NodeName(i int) string { return fmt.Sprintf("kwok-gpu-%d", i) }

// fakeNode is a node with room for the samples several times over and GPUs to schedule a
// runtime that asks for them. KWOK reads capacity and allocatable from the object it finds, and
// fills in the rest of the status (conditions, addresses, node info).
func fakeNode(i int) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
		corev1.ResourcePods:             resource.MustParse("110"),
		GPUResource:                     resource.MustParse("8"),
	}
	name := NodeName(i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				corev1.LabelHostname:           name,
				corev1.LabelOSStable:           "linux",
				corev1.LabelArchStable:         "amd64",
				"type":                         "kwok",
				"nvidia.com/gpu.present":       "true",
				"nvidia.com/gpu.product":       "fake-gpu",
				corev1.LabelInstanceTypeStable: "kwok-gpu",
			},
		},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

// defaultStorageClass makes a claim without a class, like the model cache's, bind at once.
func defaultStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kubernetes.io/host-path",
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
}

func createNodesAndStorage(ctx context.Context, c client.Client) error {
	objs := []client.Object{defaultStorageClass()}
	for i := range Nodes {
		objs = append(objs, fakeNode(i))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// waitForNodes returns once every fake node is Ready (KWOK) and without taint (nodelifecycle
// removes the not-ready taint admission put on it), so what is applied next schedules at once; or
// with the first component that exited.
func waitForNodes(ctx context.Context, c client.Client, components []*component) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, comp := range components {
			if ended, err := comp.exited(); ended {
				return false, err
			}
		}
		nodes := &corev1.NodeList{}
		if err := c.List(ctx, nodes); err != nil {
			last = err.Error()
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			if schedulable(n) {
				ready++
			}
		}
		last = fmt.Sprintf("%d of %d fake nodes Ready and untainted", ready, Nodes)
		return ready >= Nodes, nil
	})
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("waiting for the fake nodes: %s after %s", last, StartTimeout)
	}
	return err
}

func schedulable(n corev1.Node) bool {
	if len(n.Spec.Taints) > 0 {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
