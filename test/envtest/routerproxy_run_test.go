/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/llmkube/operator/test/helmtool"
)

// The proxy binary, built once per suite run from cmd/router-proxy.
var (
	proxyBinaryOnce sync.Once
	proxyBinary     string
	proxyBinaryDir  string
)

// removeProxyBinary is called by AfterSuite.
func removeProxyBinary() {
	if proxyBinaryDir != "" {
		_ = os.RemoveAll(proxyBinaryDir)
	}
}

func buildProxy() string {
	proxyBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "router-proxy-bin-")
		Expect(err).NotTo(HaveOccurred())
		proxyBinaryDir = dir
		proxyBinary = filepath.Join(dir, "router-proxy")
		cmd := exec.Command("go", "build", "-tags", "routerproxy_testseams", "-o", proxyBinary, "./cmd/router-proxy")
		cmd.Dir = helmtool.RepoRoot()
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	})
	return proxyBinary
}

// proxyProcess is the real router-proxy binary, started the way the operator's Deployment says.
type proxyProcess struct {
	cmd     *exec.Cmd
	addr    string // host:port of the API
	metrics string // host:port of /metrics
	exited  chan error
	volumes map[string]string // volume name -> the temp dir standing in for its mount
	logMu   sync.Mutex
	logs    []map[string]any
}

// runProxyAsDeployed starts the proxy binary from what the operator wrote on the API server: the
// container's args, its environment from envFrom (read from the Secrets the operator referenced,
// with the operator's prefixes) and its volumes (the ConfigMap's and Secrets' data, and Secrets'
// projected items, written into a temp dir per volume).
//
// The seam, and the only liberties taken with the Deployment: there is no kubelet, so each
// volume's mountPath in an arg is replaced by the temp dir that stands in for the mount, and
// --listen / --metrics-listen become 127.0.0.1:0 (there is no pod network namespace; the real
// ports are read from the proxy's "serving" log line). extra args are appended (a test's shorter
// timeouts); everything else is the Deployment's, unmodified.
func runProxyAsDeployed(ns, name string, extra ...string) *proxyProcess {
	d := &appsv1.Deployment{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	root := GinkgoT().TempDir()

	mounts := map[string]string{} // mountPath -> temp dir
	volumes := map[string]string{}
	for _, m := range c.VolumeMounts {
		var vol *corev1.Volume
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == m.Name {
				vol = &pod.Volumes[i]
			}
		}
		Expect(vol).NotTo(BeNil(), "volume %s of mount %s", m.Name, m.MountPath)
		dir := filepath.Join(root, m.Name)
		Expect(os.MkdirAll(dir, 0o700)).To(Succeed())
		files := map[string]string{}
		switch {
		case vol.ConfigMap != nil:
			cm := &corev1.ConfigMap{}
			Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: vol.ConfigMap.Name}, cm)).To(Succeed())
			files = cm.Data
		case vol.Secret != nil:
			s := &corev1.Secret{}
			Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: vol.Secret.SecretName}, s)).To(Succeed())
			for k, v := range s.Data {
				files[k] = string(v)
			}
		case vol.Projected != nil:
			// Secrets' items, as the kubelet projects them: an optional source or key that is
			// missing is left out.
			for _, src := range vol.Projected.Sources {
				Expect(src.Secret).NotTo(BeNil(), "only Secret projections are expected")
				s := &corev1.Secret{}
				err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: src.Secret.Name}, s)
				if apierrors.IsNotFound(err) && ptr.Deref(src.Secret.Optional, false) {
					continue
				}
				Expect(err).NotTo(HaveOccurred())
				for _, item := range src.Secret.Items {
					if v, ok := s.Data[item.Key]; ok {
						files[item.Path] = string(v)
					}
				}
			}
		case vol.EmptyDir != nil:
		default:
			Fail("a volume kind the test cannot stand in for: " + vol.Name)
		}
		if vol.Projected != nil {
			writeAtomically(dir, files) // its directories are links the kubelet swaps
		} else {
			for k, v := range files {
				Expect(os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600)).To(Succeed())
			}
		}
		mounts[m.MountPath] = dir
		volumes[m.Name] = dir
	}

	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, ef := range c.EnvFrom {
		Expect(ef.SecretRef).NotTo(BeNil(), "only Secret envFrom is expected")
		s := &corev1.Secret{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: ef.SecretRef.Name}, s)).To(Succeed())
		for k, v := range s.Data {
			env = append(env, ef.Prefix+k+"="+string(v))
		}
	}

	for _, e := range c.Env {
		env = append(env, e.Name+"="+envValue(c, e))
	}

	var args []string
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--listen="):
			a = "--listen=127.0.0.1:0"
		case strings.HasPrefix(a, "--metrics-listen="):
			a = "--metrics-listen=127.0.0.1:0"
		default: // a flag whose value lies under a mount: the longest such mount, once
			best := ""
			for path := range mounts {
				if _, v, ok := strings.Cut(a, "="+path); ok && (v == "" || v[0] == '/') && len(path) > len(best) {
					best = path
				}
			}
			if best != "" {
				k, v, _ := strings.Cut(a, "="+best)
				a = k + "=" + mounts[best] + v
			}
		}
		args = append(args, a)
	}
	args = append(args, extra...)

	p := &proxyProcess{exited: make(chan error, 1), volumes: volumes}
	p.cmd = exec.Command(buildProxy(), args...)
	p.cmd.Env = env
	stderr, err := p.cmd.StderrPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(p.cmd.Start()).To(Succeed())
	serving := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(GinkgoWriter, "router-proxy:", sc.Text())
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			p.logMu.Lock()
			p.logs = append(p.logs, line)
			p.logMu.Unlock()
			if line["msg"] == "serving" {
				serving <- line
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() { p.exited <- p.cmd.Wait() }()
	DeferCleanup(p.kill)
	select {
	case line := <-serving:
		p.addr, p.metrics = line["listen"].(string), line["metricsListen"].(string)
	case err := <-p.exited:
		Fail(fmt.Sprintf("router-proxy exited before serving: %v", err))
	case <-time.After(30 * time.Second):
		Fail("router-proxy did not start serving within 30s")
	}
	return p
}

// envValue is what the kubelet sets an env var of c to: its value, or the container's resource
// (GOMEMLIMIT from limits.memory) in units of its divisor.
func envValue(c corev1.Container, e corev1.EnvVar) string {
	if e.ValueFrom == nil {
		return e.Value
	}
	ref := e.ValueFrom.ResourceFieldRef
	Expect(ref).NotTo(BeNil(), "env %s: only values and resourceFieldRef are expected", e.Name)
	Expect(ref.Resource).To(Equal("limits.memory"), "env %s", e.Name)
	q, div := c.Resources.Limits[corev1.ResourceMemory], ref.Divisor.Value()
	if div == 0 {
		div = 1
	}
	return strconv.FormatInt(q.Value()/div, 10)
}

// remount writes files into volume's stand-in dir the way the kubelet updates a ConfigMap or
// Secret volume: the files go into a new timestamped directory, the ..data symlink is swapped to
// it atomically, and each key (the first element of a projected path) is a symlink through
// ..data.
func (p *proxyProcess) remount(volume string, files map[string]string) {
	dir := p.volumes[volume]
	Expect(dir).NotTo(BeEmpty(), "volume %s", volume)
	writeAtomically(dir, files)
}

func writeAtomically(dir string, files map[string]string) {
	ts := fmt.Sprintf("..%d", time.Now().UnixNano())
	Expect(os.Mkdir(filepath.Join(dir, ts), 0o700)).To(Succeed())
	for k, v := range files {
		Expect(os.MkdirAll(filepath.Dir(filepath.Join(dir, ts, k)), 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, ts, k), []byte(v), 0o600)).To(Succeed())
	}
	Expect(os.Symlink(ts, filepath.Join(dir, "..data_tmp"))).To(Succeed())
	Expect(os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data"))).To(Succeed())
	for k := range files {
		top, _, _ := strings.Cut(k, "/")
		link := filepath.Join(dir, top)
		if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		Expect(os.Symlink(filepath.Join("..data", top), link+".tmp")).To(Succeed())
		Expect(os.Rename(link+".tmp", link)).To(Succeed())
	}
}

func (p *proxyProcess) url(path string) string { return "http://" + p.addr + path }

func (p *proxyProcess) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *proxyProcess) terminate() { _ = p.cmd.Process.Signal(syscall.SIGTERM) }

// requestLogs are the proxy's per-request log lines so far.
func (p *proxyProcess) requestLogs() []map[string]any {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	var out []map[string]any
	for _, l := range p.logs {
		if l["msg"] == "request" {
			out = append(out, l)
		}
	}
	return out
}

// metric is the value of one sample of the proxy's /metrics, by its full text before the value
// (for example `llmkube_router_fallbacks_total{backend="flaky"}`); -1 when absent.
// routerLabel is the label every series of a proxy run as deployed carries (--router-name).
var routerLabel = regexp.MustCompile(`(\{router="[^"]*"\}|,router="[^"]*"|router="[^"]*",)`)

// withoutRouterLabel is a sample line of the proxy's exposition without its router label, so
// that a spec names a series by the labels it is about.
func withoutRouterLabel(line string) string {
	return routerLabel.ReplaceAllString(line, "")
}

func (p *proxyProcess) metric(sample string) float64 {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(withoutRouterLabel(sc.Text()), sample+" "); ok {
			var f float64
			_, _ = fmt.Sscan(v, &f)
			return f
		}
	}
	return -1
}
