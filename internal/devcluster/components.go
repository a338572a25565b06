/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Binaries and files the fuller cluster needs beside kube-apiserver and etcd in
// $KUBEBUILDER_ASSETS; hack/build-control-plane.sh puts them there.
const (
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKWOK              = "kwok"
	// kwokStages holds the Stage objects KWOK plays: node initialise and heartbeat, pod ready,
	// complete and delete (the ones `kwokctl create cluster` uses).
	kwokStages = "kwok-stages.yaml"
)

// Controllers is the subset of kube-controller-manager's controllers the dev cluster runs: what a
// Deployment, a Service, a PersistentVolumeClaim and a namespace need to behave as in a real
// cluster, and nothing that waits on a kubelet, a cloud or a signing key.
//
// Note: some are there for what the API server's admission adds on create. nodelifecycle removes
// the node.kubernetes.io/not-ready taint every new node gets once KWOK reports it Ready (without
// it, nothing schedules); pvc-protection and pv-protection remove the finalizers of every claim and
// volume (without them, a deleted claim hangs in Terminating).
var Controllers = []string{
	"deployment", "replicaset", "endpointslice", "garbagecollector", "namespace", "serviceaccount",
	"nodelifecycle", "podgc", "persistentvolume-binder", "pvc-protection", "pv-protection",
}

// PodCIDR is where KWOK takes pod addresses from: 198.18.0.0/15 is reserved for benchmarks
// (RFC 2544) and never routed, so no address of a fake pod is anything real; the fake nodes share
// NodeIP from the same range.
const (
	PodCIDR = "198.18.0.0/16"
	NodeIP  = "198.19.0.1"
)

// component is one process of the cluster, with its output in a log file.
type component struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

func checkAssets(assets string) error {
	var missing []string
	for _, f := range []string{"kube-apiserver", "etcd", binControllerManager, binScheduler, binKWOK, kwokStages} {
		if _, err := os.Stat(filepath.Join(assets, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("KUBEBUILDER_ASSETS=%s lacks %s: run `make envtest-bin` (it builds them from source once per version)", assets, strings.Join(missing, ", "))
	}
	return nil
}

// componentSpec is one component's binary and arguments.
type componentSpec struct {
	name string
	args []string
}

// controlPlaneSpecs are kube-controller-manager, running the controllers given with the extra
// arguments given, and kube-scheduler, each as the admin user of kubeconfig, none serving a port
// of its own.
func controlPlaneSpecs(kubeconfig string, controllers []string, extraCM ...string) []componentSpec {
	return []componentSpec{
		{binControllerManager, append([]string{
			"--kubeconfig=" + kubeconfig,
			"--controllers=" + strings.Join(controllers, ","),
			"--leader-elect=false",
			"--secure-port=0",
			// The in-tree hostPath provisioner serves the default StorageClass (objects.go): a
			// claim binds at once, and its volume is deleted with it.
			"--enable-hostpath-provisioner=true",
			// Pods of a deleted node, or finished ones, are collected soon.
			"--terminated-pod-gc-threshold=100",
		}, extraCM...)},
		{binScheduler, []string{
			"--kubeconfig=" + kubeconfig,
			"--leader-elect=false",
			"--secure-port=0",
		}},
	}
}

// startComponents starts kube-controller-manager, kube-scheduler and KWOK against the API server
// of kubeconfig.
func startComponents(assets, kubeconfig, logDir string) ([]*component, error) {
	specs := append(controlPlaneSpecs(kubeconfig, Controllers), componentSpec{binKWOK, []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + filepath.Join(assets, kwokStages),
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--cidr=" + PodCIDR,
		"--node-ip=" + NodeIP,
		"--node-lease-duration-seconds=40",
	}})
	return startSpecs(assets, logDir, specs)
}

func startSpecs(assets, logDir string, specs []componentSpec) ([]*component, error) {
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	var started []*component
	for _, s := range specs {
		c, err := startComponent(filepath.Join(assets, s.name), s.name, s.args, logDir)
		if err != nil {
			for _, c := range started {
				_ = c.stop()
			}
			return nil, err
		}
		started = append(started, c)
	}
	return started, nil
}

func startComponent(bin, name string, args []string, logDir string) (*component, error) {
	path := filepath.Join(logDir, name+".log")
	log, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &component{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = log.Close()
		close(c.done)
	}()
	return c, nil
}

// exited says, without waiting, whether the process has ended, and how.
func (c *component) exited() (bool, error) {
	select {
	case <-c.done:
		return true, fmt.Errorf("%s exited: %v; see %s", c.name, c.err, c.log.Name())
	default:
		return false, nil
	}
}

// stop asks the process to end (SIGTERM) and kills it if it has not within ten seconds.
func (c *component) stop() error {
	if ended, _ := c.exited(); ended {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
		return errors.New(c.name + " did not stop on SIGTERM within 10s and was killed")
	}
}
