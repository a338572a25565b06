/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Image is an OCI image layout on disk (internal/release's output) and the name containerd knows it
// by: BaseName:<tag>, where the tag is the layout's org.opencontainers.image.ref.name.
type Image struct {
	Layout   string
	BaseName string
}

// Ref is the image's full name, BaseName:<the layout's tag>.
func (im Image) Ref() (string, error) {
	data, err := os.ReadFile(filepath.Join(im.Layout, "index.json"))
	if err != nil {
		return "", err
	}
	var idx struct {
		Manifests []struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return "", fmt.Errorf("%s: %w", im.Layout, err)
	}
	for _, m := range idx.Manifests {
		if tag := m.Annotations["org.opencontainers.image.ref.name"]; tag != "" {
			return im.BaseName + ":" + tag, nil
		}
	}
	return "", fmt.Errorf("%s names no tag (org.opencontainers.image.ref.name)", im.Layout)
}

// Start writes the configurations, starts containerd, loads the sandbox image and images into it,
// then starts the kubelet and kube-proxy, all in the node's network namespace and cgroup, with
// kubeconfig as their identity. It returns once containerd answers; the caller waits for the Node
// object to be Ready.
func (n *Node) Start(kubeconfig string, sandbox Image, images ...Image) error {
	for _, d := range []string{n.path("run"), n.path("cni", "net.d"), n.path("kubelet"), n.path("pod-logs"), n.cfg.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := saveSysctls(n.cfg.StateDir); err != nil {
		return err
	}
	sandboxRef, err := sandbox.Ref()
	if err != nil {
		return err
	}
	files := map[string]string{
		"containerd.toml":               n.containerdConfig(sandboxRef),
		"cni/net.d/10-llmkube.conflist": n.cniConfig(),
		"kubelet.yaml":                  n.kubeletConfig(),
		"kube-proxy.yaml":               n.kubeProxyConfig(kubeconfig),
	}
	for f, content := range files {
		if err := os.WriteFile(n.path(f), []byte(content), 0o600); err != nil {
			return err
		}
	}
	if err := n.makeCgroups(); err != nil {
		return err
	}
	// containerd finds its shim, and the shim finds runc, on PATH.
	path := n.cfg.Assets + ":" + os.Getenv("PATH")
	if err := n.run("containerd", []string{"--config", n.path("containerd.toml")}, path); err != nil {
		return err
	}
	if err := n.WaitFor(30*time.Second, func() error {
		c, err := net.Dial("unix", n.containerdSocket())
		if err == nil {
			_ = c.Close()
		}
		return err
	}); err != nil {
		return fmt.Errorf("containerd did not listen on %s: %w", n.containerdSocket(), err)
	}
	for _, im := range append([]Image{sandbox}, images...) {
		if err := n.importImage(im); err != nil {
			return err
		}
	}
	if err := n.run("kubelet", []string{
		"--config=" + n.path("kubelet.yaml"),
		"--kubeconfig=" + kubeconfig,
		"--root-dir=" + n.path("kubelet"),
		"--cert-dir=" + n.path("kubelet", "pki"),
		"--hostname-override=" + n.cfg.Name,
		"--node-ip=" + n.cfg.NodeIP().String(),
		"--v=1",
	}, path); err != nil {
		return err
	}
	return n.run("kube-proxy", []string{"--config=" + n.path("kube-proxy.yaml"), "--v=1"}, path)
}

// importImage loads an OCI layout into containerd's Kubernetes namespace, the one the kubelet's
// images live in, by piping it as a tar archive to ctr.
func (n *Node) importImage(im Image) error {
	tar := exec.Command("tar", "-C", im.Layout, "-cf", "-", ".")
	ctr := exec.Command(filepath.Join(n.cfg.Assets, "ctr"), "--address", n.containerdSocket(), "-n", "k8s.io",
		"images", "import", "--base-name", im.BaseName, "-")
	pipe, err := tar.StdoutPipe()
	if err != nil {
		return err
	}
	ctr.Stdin = pipe
	var out strings.Builder
	ctr.Stdout, ctr.Stderr = &out, &out
	if err := tar.Start(); err != nil {
		return err
	}
	err = ctr.Run()
	if werr := tar.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("importing %s from %s: %v: %s", im.BaseName, im.Layout, err, out.String())
	}
	return nil
}

// run starts one of the node's binaries inside its network namespace (nsenter execs it, so the
// process keeps the pid it started with) and moves it into the node's cgroup at once, before it
// starts anything of its own (containerd's shims, the kubelet's containers).
func (n *Node) run(name string, args []string, path string) error {
	logf, err := os.Create(filepath.Join(n.cfg.LogDir, name+".log"))
	if err != nil {
		return err
	}
	full := append([]string{"--net=" + filepath.Join("/run/netns", n.cfg.Name), "--", filepath.Join(n.cfg.Assets, name)}, args...)
	cmd := exec.Command("nsenter", full...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The kernel stops the node's processes when the process that started them ends in any way,
	// so none of them outlives the API server it talks to.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logf, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logf.Close()
		close(p.done)
	}()
	n.procs = append(n.procs, p)
	return n.joinCgroup(cmd.Process.Pid)
}

// hierarchies lists the cgroup v1 hierarchies (and the unified one of a hybrid layout) mounted
// under /sys/fs/cgroup, skipping the links that name a co-mounted pair twice (cpu -> cpu,cpuacct).
func hierarchies() []string {
	entries, _ := os.ReadDir(cgroupRoot)
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			out = append(out, filepath.Join(cgroupRoot, e.Name()))
		}
	}
	return out
}

// makeCgroups creates /<name> (the kubelet's cgroupRoot, for the pods) and /<name>/system (for the
// node's own processes) in every hierarchy.
//
// Note: a cgroup v1 cpuset starts with no CPUs and no memory nodes and refuses processes until it
// has some, so both levels copy the machine's.
func (n *Node) makeCgroups() error {
	for _, h := range hierarchies() {
		top := filepath.Join(h, n.cfg.Name)
		if err := os.MkdirAll(filepath.Join(top, "system"), 0o755); err != nil {
			return fmt.Errorf("creating the node's cgroup: %w", err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(h, f))
			if err != nil {
				continue
			}
			for _, d := range []string{top, filepath.Join(top, "system")} {
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					return fmt.Errorf("setting %s of %s: %w", f, d, err)
				}
			}
		}
	}
	return nil
}

func (n *Node) joinCgroup(pid int) error {
	var errs []error
	for _, h := range hierarchies() {
		f := filepath.Join(h, n.cfg.Name, "system", "cgroup.procs")
		if err := os.WriteFile(f, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("moving pid %d into %s: %w", pid, f, err))
		}
	}
	return errors.Join(errs...)
}

// Memory is the resident memory of the node's own processes (containerd with its shims, the
// kubelet, kube-proxy), in bytes by name; the shims count under "containerd-shims".
func (n *Node) Memory() map[string]int64 {
	out := map[string]int64{}
	own := map[int]string{}
	for _, p := range n.procs {
		own[p.cmd.Process.Pid] = p.name
	}
	for _, pid := range pidsIn(filepath.Join(cgroupRoot, "pids", n.cfg.Name, "system")) {
		name, ok := own[pid]
		if !ok {
			name = "containerd-shims"
		}
		out[name] += rss(pid)
	}
	return out
}

func rss(pid int) int64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
