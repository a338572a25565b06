/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node

import (
	"fmt"
	"path/filepath"
)

// containerdConfig points every directory of containerd (and of its CRI plugin, which keeps the
// pods' network namespaces under its state directory) into the node's state directory, and runs
// containers with Debian's runc on the cgroupfs driver (no systemd manages this node's cgroups).
//
// The sandbox image is the project's own pause (cmd/pause), loaded into containerd before the
// kubelet starts, since registry.k8s.io cannot be reached.
func (n *Node) containerdConfig(sandbox string) string {
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
# NRI would open a socket under /var/run: not needed here.
disabled_plugins = ["io.containerd.nri.v1.nri"]

[grpc]
  address = %[3]q

[ttrpc]
  address = "%[3]s.ttrpc"

[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = %[4]q
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %[5]q
  [plugins.'io.containerd.cri.v1.runtime']
    netns_mounts_under_state_dir = true
    # This machine lacks CAP_SYS_RESOURCE even for root: lowering a process's oom_score_adj
    # fails, and runc refuses every sandbox the kubelet asks -998 for. Requested values below
    # containerd's own (0) are raised to it instead.
    restrict_oom_score_adj = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = %[6]q
          SystemdCgroup = false
          Root = %[9]q
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%[7]q]
      conf_dir = %[8]q
`, n.path("containerd"), n.path("run", "containerd"), n.containerdSocket(), n.path("containerd", "opt"),
		sandbox, n.cfg.Runc, filepath.Join(n.cfg.Assets, "cni"), n.path("cni", "net.d"), n.path("run", "runc"))
}

func (n *Node) containerdSocket() string { return n.path("run", "containerd.sock") }

// cniConfig is the pod network: a bridge inside the node's namespace with the pod range, and
// masquerade for traffic that leaves it, so that a pod reaching the API server on the machine's end
// of the veth comes from NodeIP and the machine needs no route to the pod range.
func (n *Node) cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "llmkube",
  "plugins": [
    {"type": "bridge", "bridge": "llmkube0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, n.cfg.PodCIDR, n.path("cni", "ipam"))
}

// kubeletConfig is the kubelet's configuration.
//
// Note: failCgroupV1 false lets the kubelet run on this machine's cgroup v1 hierarchy (1.35 made
// it refuse by default). The kubelet's API is served on NodeIP only and allows everyone: the API
// server reaches it there for logs, exec and port-forward without a client certificate, and
// nothing outside this machine can reach that address. Eviction thresholds are low because the
// node shares a disk with its machine; a pod is never evicted for the machine's own use of it.
func (n *Node) kubeletConfig() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /%[1]s
containerRuntimeEndpoint: unix://%[2]s
address: %[3]s
port: 10250
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
failSwapOn: false
protectKernelDefaults: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: "50Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podLogsDir: %[4]q
podCIDR: %[5]q
serializeImagePulls: false
maxPods: 50
fileCheckFrequency: 5s
syncFrequency: 10s
`, n.cfg.Name, n.containerdSocket(), n.cfg.NodeIP(), n.path("pod-logs"), n.cfg.PodCIDR)
}

// kubeProxyConfig routes Services in iptables mode, inside the node's namespace.
//
// Note: conntrack's maxPerCore and min are 0 so that kube-proxy leaves the machine-wide conntrack
// table size alone.
func (n *Node) kubeProxyConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: %q
hostnameOverride: %q
clusterCIDR: %q
bindAddress: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  min: 0
`, kubeconfig, n.cfg.Name, n.cfg.PodCIDR, n.cfg.NodeIP())
}
