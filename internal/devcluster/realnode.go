/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/llmkube/operator/internal/node"
)

// RealControllers are the controllers of a cluster with a real node: those of the fake one, plus
// root-ca-cert-publisher, which writes the kube-root-ca.crt ConfigMap every pod's service-account
// token volume reads the API server's CA from.
var RealControllers = append(append([]string{}, Controllers...), "root-ca-cert-publisher")

// Ranges of the cluster with a real node; they exist only inside the node's network namespace.
const (
	RealPodCIDR     = "198.18.0.0/24"
	RealServiceCIDR = "198.18.128.0/24"
	// realKubernetesIP is the `kubernetes` Service's ClusterIP: the first of the Service range.
	realKubernetesIP = "198.18.128.1"
)

// NodeOptions are the real node of StartWithNode.
type NodeOptions struct {
	// Name names the node, its network namespace and cgroup; StateDir holds all it writes.
	Name     string
	StateDir string
	// Link is the /30 joining the node to the machine; the API server listens on its first address.
	Link netip.Prefix
	// Sandbox is the pause image; Images are loaded into the node before it starts (the project's
	// own, built by `make images`), so no pod pulls from outside this machine.
	Sandbox node.Image
	Images  []node.Image
	// Runc is the OCI runtime; Debian's /usr/sbin/runc when empty.
	Runc string
}

// NodeAssets are the binaries hack/build-node.sh adds to $KUBEBUILDER_ASSETS.
var NodeAssets = []string{"kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "ctr", "cni/bridge", "cni/host-local", "cni/loopback", "cni/portmap"}

// CanRunContainers says whether this machine can run the real node, and why not: root, cgroup v1
// or v2 mounted, runc, iptables, nsenter and ip on PATH, overlayfs in the kernel.
func CanRunContainers() error {
	if os.Geteuid() != 0 {
		return errors.New("the real node needs root (network namespaces, mounts, cgroups)")
	}
	for _, b := range []string{"runc", "iptables", "conntrack", "nsenter", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install runc iptables conntrack)", b)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/pids"); err != nil {
		if _, err2 := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err2 != nil {
			return errors.New("no cgroup hierarchy under /sys/fs/cgroup")
		}
	}
	data, err := os.ReadFile("/proc/filesystems")
	if err != nil || !slices.Contains(strings.Fields(string(data)), "overlay") {
		return errors.New("the kernel has no overlay file system")
	}
	return nil
}

// StartWithNode starts a cluster whose one node is real: the node's network first (Prepare), then
// kube-apiserver and etcd with the API server listening on the machine's end of the node's link
// and serving a certificate that pods accept, kube-controller-manager and kube-scheduler, then
// containerd, the kubelet and kube-proxy. It returns once the node is Ready. With an empty crdDir
// no CRD is installed: `helm install` of the chart installs them, as for a user.
func StartWithNode(crdDir, kubeconfigPath string, opts NodeOptions) (*Cluster, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: use `make run`, which builds the cluster first")
	}
	for _, f := range append([]string{"kube-apiserver", "etcd", binControllerManager, binScheduler}, NodeAssets...) {
		if _, err := os.Stat(filepath.Join(assets, f)); err != nil {
			return nil, fmt.Errorf("KUBEBUILDER_ASSETS=%s lacks %s: run `make node-bin`", assets, f)
		}
	}
	logDir := filepath.Join(filepath.Dir(kubeconfigPath), "logs")
	n, err := node.Prepare(node.Config{
		Name: opts.Name, Assets: assets, StateDir: opts.StateDir, LogDir: logDir, Link: opts.Link,
		PodCIDR: RealPodCIDR, ServiceCIDR: RealServiceCIDR, Runc: opts.Runc,
	})
	if err != nil {
		return nil, err
	}
	host := n.Config().HostIP()
	certDir := filepath.Join(opts.StateDir, "apiserver-pki")
	caPEM, err := writeServingPKI(certDir,
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(host.String()), net.ParseIP(realKubernetesIP)},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		_ = n.Stop()
		return nil, err
	}
	port, err := freePort(host)
	if err != nil {
		_ = n.Stop()
		return nil, err
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	// etcd's data sits in the node's state directory, as the API server's certificates do, so that
	// both processes name it on their command lines: envtest starts them in process groups of their
	// own with no parent-death signal, so a run killed outright leaves them running, and the next
	// run's Cleanup finds them by that name.
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(opts.StateDir, "etcd")}
	if crdDir != "" {
		env.CRDDirectoryPaths, env.ErrorIfCRDPathMissing = []string{crdDir}, true
	}
	api := env.ControlPlane.GetAPIServer()
	api.CertDir = certDir
	api.SecureServing.CA = caPEM
	api.SecureServing.Address = host.String()
	api.SecureServing.Port = strconv.Itoa(port)
	// Measured: with a real node the API server takes longer than envtest's 20 s to stop, and
	// envtest then kills it and reports a timeout.
	api.StopTimeout = 90 * time.Second
	api.Configure().
		Set("advertise-address", host.String()).
		Set("service-cluster-ip-range", RealServiceCIDR).
		// The node's name resolves nowhere; its InternalIP is NodeIP, where the kubelet serves
		// logs, exec and port-forward.
		Set("kubelet-preferred-address-types", "InternalIP").
		// envtest turns the ServiceAccount admission off; pods of a real node need their token.
		Disable("disable-admission-plugins")
	cfg, err := env.Start()
	if err != nil {
		_ = n.Stop()
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	c := &Cluster{Config: cfg, Kubeconfig: kubeconfigPath, LogDir: logDir, env: env, node: n}
	fail := func(err error) (*Cluster, error) {
		_ = c.Stop()
		return nil, err
	}
	if err := writeAdminKubeconfig(env, kubeconfigPath); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return fail(err)
	}
	if err := cl.Create(ctx, defaultStorageClass()); err != nil {
		return fail(err)
	}
	if c.components, err = startSpecs(assets, logDir, controlPlaneSpecs(kubeconfigPath, RealControllers,
		"--root-ca-file="+filepath.Join(certDir, "ca.crt"))); err != nil {
		return fail(err)
	}
	// The kubelet and kube-proxy use the admin kubeconfig: a node of one's own machine needs no
	// bootstrap token or node identity.
	if err := n.Start(kubeconfigPath, opts.Sandbox, opts.Images...); err != nil {
		return fail(fmt.Errorf("%w (logs in %s)", err, logDir))
	}
	if err := n.WaitFor(StartTimeout, func() error { return nodeReady(ctx, cl, opts.Name) }); err != nil {
		return fail(fmt.Errorf("the node did not become Ready: %w (logs in %s)", err, logDir))
	}
	return c, nil
}

// Node is the cluster's real node, or nil in a cluster of fake ones.
func (c *Cluster) Node() *node.Node { return c.node }

func nodeReady(ctx context.Context, cl client.Client, name string) error {
	var nd corev1.Node
	if err := cl.Get(ctx, types.NamespacedName{Name: name}, &nd); err != nil {
		return err
	}
	for _, cond := range nd.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			if cond.Status == corev1.ConditionTrue {
				return nil
			}
			return fmt.Errorf("node %s not Ready: %s: %s", name, cond.Reason, cond.Message)
		}
	}
	return fmt.Errorf("node %s has no Ready condition yet", name)
}

func freePort(host netip.Addr) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host.String(), "0"))
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
