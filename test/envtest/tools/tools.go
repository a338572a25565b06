//go:build tools

// Package tools pins the control-plane binaries that the integration suite and `make run` run:
// kube-apiserver and etcd for every test, and for `make run`'s fuller cluster kube-controller-manager,
// kube-scheduler (same Kubernetes version) and KWOK, which plays the kubelet of fake nodes; and for
// the real node (hack/build-node.sh) the kubelet and kube-proxy at the same version.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
