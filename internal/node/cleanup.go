/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const cgroupRoot = "/sys/fs/cgroup"

// Cleanup removes everything a node of this name set up: its processes (the kubelet, containerd,
// kube-proxy, the shims and every container, all in its cgroup), the mounts under its state
// directory, its network namespace (with the veth, the bridge and every iptables rule in it), its
// cgroups, the kernel settings it changed (written back) and its state directory. It is what Stop
// does last, and what Start does first, so that a run that crashed (or was killed) leaves nothing
// behind once the next one starts.
//
// Note: the order matters. Processes go first, so no shim remounts what is being unmounted; mounts
// go before the state directory is removed (removing a directory with a live mount below it would
// empty the mounted file system); the network namespace goes after its processes, so no CNI call
// recreates anything in it.
func Cleanup(name, stateDir string) error {
	var errs []error
	errs = append(errs, killCgroup(name))
	errs = append(errs, killNaming(stateDir))
	errs = append(errs, unmountUnder(stateDir))
	// The machine's end of the veth goes explicitly: a deleted namespace is torn down by the kernel
	// later, with its end of the pair, and a next run creating the same interface at once would
	// find it still there (measured by the crash test).
	host, _ := vethNames(name)
	if _, err := os.Stat(filepath.Join("/sys/class/net", host)); err == nil {
		if out, err := exec.Command("ip", "link", "delete", host).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("deleting interface %s: %v: %s", host, err, out))
		}
	}
	if err := exec.Command("ip", "netns", "delete", name).Run(); err != nil && netnsExists(name) {
		errs = append(errs, fmt.Errorf("deleting network namespace %s: %w", name, err))
	}
	errs = append(errs, removeCgroups(name))
	errs = append(errs, restoreSysctls(stateDir))
	removeContainerLogLinks(stateDir)
	removeEmptyFixedDirs()
	if err := os.RemoveAll(stateDir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func netnsExists(name string) bool {
	_, err := os.Stat(filepath.Join("/run/netns", name))
	return err == nil
}

// cgroupDirs lists /sys/fs/cgroup/<hierarchy>/<name> for each cgroup v1 hierarchy that has it.
func cgroupDirs(name string) []string {
	entries, _ := os.ReadDir(cgroupRoot)
	var dirs []string
	for _, e := range entries {
		d := filepath.Join(cgroupRoot, e.Name(), name)
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// pidsIn lists the processes of every cgroup below dir.
func pidsIn(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer func() { _ = f.Close() }()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if pid, err := strconv.Atoi(strings.TrimSpace(s.Text())); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// killCgroup kills every process in the node's cgroups and waits until none is left.
func killCgroup(name string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []int
		for _, d := range cgroupDirs(name) {
			left = append(left, pidsIn(d)...)
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of node %s still running after SIGKILL: %v", name, left)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// namingPids lists the processes, this one aside, whose command line names a path under dir.
func namingPids(dir string) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cmd := strings.ReplaceAll(string(data), "\x00", " "); strings.Contains(cmd, filepath.Clean(dir)+"/") {
			out[pid] = cmd
		}
	}
	return out
}

// killNaming kills every process whose command line names a path under stateDir and waits until
// none is left.
//
// Note: these are the processes that live outside the node's cgroup but on its files: the
// cluster's kube-apiserver and etcd, whose certificates and data are in the state directory.
// Started by envtest in process groups of their own and without a parent-death signal, they
// outlive a run that was killed (SIGKILL, a closed terminal) and would serve its stale state.
func killNaming(stateDir string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := namingPids(stateDir)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes naming %s still running after SIGKILL: %v", stateDir, left)
		}
		for pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroups removes the node's cgroups, deepest first (a cgroup v1 directory goes with rmdir,
// and only once it has no children).
func removeCgroups(name string) error {
	var errs []error
	for _, root := range cgroupDirs(name) {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder detaches every mount at or below dir, deepest first.
func unmountUnder(dir string) error {
	dir = filepath.Clean(dir)
	var errs []error
	for attempt := 0; attempt < 5; attempt++ {
		points, err := mountsUnder(dir)
		if err != nil {
			return err
		}
		if len(points) == 0 {
			return nil
		}
		errs = errs[:0]
		for _, p := range points {
			if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

func mountsUnder(dir string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		p := unescapeMountPath(f[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	return points, nil
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeContainerLogLinks removes the links the kubelet keeps in /var/log/containers (a path it
// does not let one configure) that point into this node's state directory.
func removeContainerLogLinks(stateDir string) {
	entries, _ := os.ReadDir("/var/log/containers")
	for _, e := range entries {
		p := filepath.Join("/var/log/containers", e.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, stateDir+"/") {
			_ = os.Remove(p)
		}
	}
}

// Leftovers lists what a node of this name still has on the machine: its network namespace, its
// cgroups and their processes, processes whose command line names its state directory, mounts
// under it and the directory itself. Empty after Stop and after Cleanup.
func Leftovers(name, stateDir string) []string {
	var out []string
	if netnsExists(name) {
		out = append(out, "network namespace "+name)
	}
	for _, d := range cgroupDirs(name) {
		out = append(out, "cgroup "+d)
		if pids := pidsIn(d); len(pids) > 0 {
			out = append(out, fmt.Sprintf("processes %v in %s", pids, d))
		}
	}
	for pid, cmd := range namingPids(stateDir) {
		out = append(out, fmt.Sprintf("process %d naming %s: %.200s", pid, stateDir, cmd))
	}
	if points, _ := mountsUnder(filepath.Clean(stateDir)); len(points) > 0 {
		out = append(out, fmt.Sprintf("%d mounts under %s", len(points), stateDir))
	}
	if _, err := os.Stat(stateDir); err == nil {
		out = append(out, "directory "+stateDir)
	}
	host, _ := vethNames(name)
	if _, err := os.Stat(filepath.Join("/sys/class/net", host)); err == nil {
		out = append(out, "interface "+host)
	}
	return out
}

// fixedDirs are the directories the kubelet and containerd create at paths no setting moves: the
// shims' sockets, the device plugins' directory, the container log links. Each is removed once
// empty, children first; a directory something else still uses is not empty and stays.
var fixedDirs = []string{"/run/containerd/s", "/run/containerd/runc", "/run/containerd",
	"/var/lib/kubelet/device-plugins", "/var/lib/kubelet", "/var/log/containers"}

func removeEmptyFixedDirs() {
	// The shims and the kubelet leave their sockets behind when they are killed. A socket nobody
	// answers on is stale, whoever made it; a live containerd's shim answers and keeps its own.
	for _, d := range []string{"/run/containerd/s", "/var/lib/kubelet/device-plugins"} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			if e.Type()&os.ModeSocket == 0 {
				continue
			}
			if c, err := net.DialTimeout("unix", p, time.Second); err == nil {
				_ = c.Close()
			} else if errors.Is(err, syscall.ECONNREFUSED) {
				_ = os.Remove(p)
			}
		}
	}
	for _, d := range fixedDirs {
		_ = syscall.Rmdir(d)
	}
}
