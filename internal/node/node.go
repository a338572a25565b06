/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Config is one node.
type Config struct {
	// Name names the node object, its network namespace, its cgroup and its lock; two nodes of one
	// name cannot run at once (the second is refused).
	Name string
	// Assets holds the binaries of hack/build-node.sh: kubelet, kube-proxy, containerd,
	// containerd-shim-runc-v2, ctr and cni/.
	Assets string
	// StateDir holds everything the node writes; it is removed when the node stops.
	StateDir string
	// LogDir receives containerd.log, kubelet.log and kube-proxy.log.
	LogDir string
	// Link is the /30 of the veth pair: its first address is HostIP (the machine's end, where the
	// API server listens), its second NodeIP (the node's end, its InternalIP).
	Link netip.Prefix
	// PodCIDR is the pod range, and ServiceCIDR the API server's Service range; both exist only
	// inside the node's network namespace.
	PodCIDR     string
	ServiceCIDR string
	// Runc is the OCI runtime containerd's shim runs: Debian's /usr/sbin/runc when empty.
	Runc string
}

// HostIP is the machine's end of the node's link.
func (c Config) HostIP() netip.Addr { return c.Link.Masked().Addr().Next() }

// NodeIP is the node's end of its link.
func (c Config) NodeIP() netip.Addr { return c.HostIP().Next() }

// Node is a node whose network is up and whose processes may be running.
type Node struct {
	cfg   Config
	lock  *os.File
	procs []*process
}

type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// Prepare takes the node's lock, removes what a previous run of the same name left (Cleanup), and
// creates the network namespace and the veth pair, so that the API server can listen on HostIP
// before the node starts.
func Prepare(cfg Config) (*Node, error) {
	if cfg.Name == "" || cfg.StateDir == "" || cfg.Assets == "" || !cfg.Link.IsValid() || cfg.Link.Bits() != 30 {
		return nil, errors.New("node: Name, StateDir, Assets and a /30 Link are required")
	}
	if cfg.Runc == "" {
		cfg.Runc = "/usr/sbin/runc"
	}
	if err := os.MkdirAll(filepath.Dir(cfg.StateDir), 0o755); err != nil {
		return nil, err
	}
	// The lock lives beside the state directory, which Cleanup removes; flock releases it when the
	// process ends in any way, so a crashed run's lock never blocks the next one.
	lock, err := os.OpenFile(cfg.StateDir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("node %s is in use by another process (%s is locked)", cfg.Name, lock.Name())
	}
	n := &Node{cfg: cfg, lock: lock}
	if err := Cleanup(cfg.Name, cfg.StateDir); err != nil {
		n.release()
		return nil, fmt.Errorf("removing what a previous node %s left: %w", cfg.Name, err)
	}
	if err := n.setupNetwork(); err != nil {
		_ = Cleanup(cfg.Name, cfg.StateDir)
		n.release()
		return nil, err
	}
	return n, nil
}

func (n *Node) release() {
	_ = syscall.Flock(int(n.lock.Fd()), syscall.LOCK_UN)
	_ = n.lock.Close()
}

func (n *Node) path(elem ...string) string {
	return filepath.Join(append([]string{n.cfg.StateDir}, elem...)...)
}

// Config is the node's configuration, with defaults filled in.
func (n *Node) Config() Config { return n.cfg }

// setupNetwork creates the namespace and joins it to the machine by a veth pair: HostIP on the
// machine's end, NodeIP and a default route to HostIP on the node's. Bridge netfilter and
// forwarding, which kube-proxy and the bridge plugin need, are set inside the namespace only.
func (n *Node) setupNetwork() error {
	name := n.cfg.Name
	host, peer := vethNames(name)
	bits := strconv.Itoa(n.cfg.Link.Bits())
	steps := [][]string{
		{"netns", "add", name},
		{"link", "add", host, "type", "veth", "peer", "name", peer, "netns", name},
		{"addr", "add", n.cfg.HostIP().String() + "/" + bits, "dev", host},
		{"link", "set", host, "up"},
		{"-n", name, "link", "set", "lo", "up"},
		{"-n", name, "addr", "add", n.cfg.NodeIP().String() + "/" + bits, "dev", peer},
		{"-n", name, "link", "set", peer, "up"},
		{"-n", name, "route", "add", "default", "via", n.cfg.HostIP().String()},
	}
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v: %v: %s", s, err, out)
		}
	}
	for _, s := range []string{"net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1", "net.ipv4.conf.all.route_localnet=1"} {
		if out, err := exec.Command("ip", "netns", "exec", name, "sysctl", "-qw", s).CombinedOutput(); err != nil {
			return fmt.Errorf("sysctl %s in %s: %v: %s", s, name, err, out)
		}
	}
	return nil
}

// vethNames are the two ends' interface names (at most 15 bytes).
func vethNames(name string) (host, peer string) {
	if len(name) > 11 {
		name = name[:11]
	}
	return name + "-h", "eth0"
}

// WaitFor waits until check returns nil, or until timeout, then returns the last error; it
// returns early with the error of a node process that exited.
func (n *Node) WaitFor(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if perr := n.exited(); perr != nil {
			return perr
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (n *Node) exited() error {
	for _, p := range n.procs {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %v; see %s", p.name, p.err, p.log.Name())
		default:
		}
	}
	return nil
}

// StopProcesses stops the node's processes (SIGTERM, then SIGKILL after ten seconds), then kills
// every container left in its cgroup, and leaves its network, mounts and files in place for Stop.
//
// Note: pods outlive a stopped kubelet; left running, the operator's pod keeps its watches open
// and the API server does not stop within envtest's timeout.
func (n *Node) StopProcesses() error {
	for i := len(n.procs) - 1; i >= 0; i-- {
		p := n.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	n.procs = nil
	return killCgroup(n.cfg.Name)
}

// Stop stops the node's processes and removes everything it set up (Cleanup), then releases its
// lock.
func (n *Node) Stop() error {
	err := errors.Join(n.StopProcesses(), Cleanup(n.cfg.Name, n.cfg.StateDir))
	n.release()
	return err
}
