/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node

import (
	"net/netip"
	"strings"
	"testing"
)

func TestTheLinkGivesTheMachineTheFirstAddressAndTheNodeTheSecond(t *testing.T) {
	c := Config{Link: netip.MustParsePrefix("198.19.253.0/30")}
	if c.HostIP().String() != "198.19.253.1" || c.NodeIP().String() != "198.19.253.2" {
		t.Fatalf("HostIP %s, NodeIP %s", c.HostIP(), c.NodeIP())
	}
}

func TestInterfaceNamesFitTheKernelsLimit(t *testing.T) {
	host, peer := vethNames("a-very-long-node-name-indeed")
	if len(host) > 15 || len(peer) > 15 {
		t.Fatalf("%q / %q longer than 15 bytes", host, peer)
	}
}

// The settings this machine needs, each found by a failure (docs/real-node.md): the kubelet on
// cgroup v1, and no sandbox asking for a lower oom_score_adj than root may set here.
func TestTheConfigurationsCarryWhatThisMachineNeeds(t *testing.T) {
	n := &Node{cfg: Config{Name: "n", StateDir: "/s", Assets: "/a", Link: netip.MustParsePrefix("198.19.253.0/30"), PodCIDR: "198.18.0.0/24", Runc: "/usr/sbin/runc"}}
	for _, c := range []struct{ text, want string }{
		{n.kubeletConfig(), "failCgroupV1: false"},
		{n.kubeletConfig(), "cgroupRoot: /n"},
		{n.kubeletConfig(), "address: 198.19.253.2"},
		{n.containerdConfig("localhost/llmkube/pause:0.1.0"), "restrict_oom_score_adj = true"},
		{n.containerdConfig("localhost/llmkube/pause:0.1.0"), `sandbox = "localhost/llmkube/pause:0.1.0"`},
		{n.containerdConfig("x"), `BinaryName = "/usr/sbin/runc"`},
		{n.cniConfig(), `"subnet": "198.18.0.0/24"`},
		{n.kubeProxyConfig("/k"), "maxPerCore: 0"},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("missing %q in:\n%s", c.want, c.text)
		}
	}
}

func TestMountPathsAreUnescaped(t *testing.T) {
	if got := unescapeMountPath(`/var/lib/a\040b`); got != "/var/lib/a b" {
		t.Fatalf("got %q", got)
	}
}
