/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package node runs a real Kubernetes node on this machine for the local cluster and the
// end-to-end suite: containerd with Debian's runc, the kubelet and kube-proxy, and a pod network of
// CNI's bridge, all built from source (hack/build-node.sh) and run against the embedded control
// plane. Its containers are real: the project's images run as processes in their own namespaces.
//
// Everything it sets up lives in places named after the node and is removed when it stops, and by
// the next run when a previous one crashed (Cleanup):
//   - one network namespace, <name>, where containerd, the kubelet and kube-proxy run, joined to the
//     machine by one veth pair with a /30 of its own (HostIP on the machine's end, NodeIP on the
//     node's). The pod bridge, the pod range, the Service range and every iptables rule that
//     kubelet, kube-proxy and the CNI plugins write exist only inside it, so nothing they route can
//     reach another address, and deleting the namespace removes them all;
//   - one state directory, under which the kubelet, containerd and the CNI plugins keep their files
//     and make every mount (overlay file systems, volumes, the pods' network namespaces);
//   - one cgroup, /<name>, in every cgroup v1 hierarchy, holding the node's processes, its
//     containerd shims and every pod: a crash leaves nothing running that Cleanup cannot find;
//   - the kernel settings the kubelet changes for itself (kernel.panic and friends), written back.
package node
