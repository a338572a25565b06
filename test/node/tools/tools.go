//go:build tools

// Package tools pins the parts of the real node that are not Kubernetes binaries: containerd 2.x
// with its runc shim and ctr (to load the project's images), and the CNI plugins the pod network
// uses (bridge, host-local, loopback, portmap). The kubelet and kube-proxy come from
// test/envtest/tools, at the control plane's version. runc, iptables and conntrack come from Debian.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
