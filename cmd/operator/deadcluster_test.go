/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// refusedAddress is a loopback address where nothing listens: a port that was just given up.
func refusedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// writeKubeconfig writes a kubeconfig for server whose names are name, as envtest (and so
// `make run`) writes them when name is "envtest".
func writeKubeconfig(t *testing.T, path, server, name string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "x"}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

func checkFile(t *testing.T, path, devKubeconfig string) error {
	t.Helper()
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return checkReachable(cfg, rules, devKubeconfig)
}

// Proves D2: a KUBECONFIG left over from a stopped `make run` is named as such, whether it is the
// file make run wrote or a copy of it; another local cluster that is down is said to be down.
func TestDeadKubeconfigIsNamed(t *testing.T) {
	dir := t.TempDir()
	dead := "https://" + refusedAddress(t)
	dev := filepath.Join(dir, ".dev", "kubeconfig")
	writeKubeconfig(t, dev, dead, "envtest")
	copied := filepath.Join(dir, "copy")
	writeKubeconfig(t, copied, dead, "envtest")
	kind := filepath.Join(dir, "kind")
	writeKubeconfig(t, kind, dead, "kind-kind")

	for _, path := range []string{dev, copied} {
		err := checkFile(t, path, dev)
		if err == nil || !strings.Contains(err.Error(), "earlier `make run`") || !strings.Contains(err.Error(), "unset KUBECONFIG") {
			t.Errorf("%s: got %v, want the stopped make run named", path, err)
		}
	}
	if err := checkFile(t, kind, dev); err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Errorf("kind: got %v, want the local cluster said to be down", err)
	}

	// A cluster that answers, and a remote address, are left to the ordinary client.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	live := filepath.Join(dir, "live")
	writeKubeconfig(t, live, "https://"+l.Addr().String(), "envtest")
	if err := checkFile(t, live, dev); err != nil {
		t.Errorf("a listening server: %v", err)
	}
	remote := filepath.Join(dir, "remote")
	writeKubeconfig(t, remote, "https://192.0.2.1:6443", "envtest")
	if err := checkFile(t, remote, dev); err != nil {
		t.Errorf("a remote server is not dialled: %v", err)
	}
}

// Proves D2 on the binary `make run` runs: with the exported KUBECONFIG of a stopped make run, the
// operator exits with the explanation, not with "connection refused".
func TestOperatorExplainsStoppedDevCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the operator")
	}
	dir := t.TempDir()
	dev := filepath.Join(dir, ".dev", "kubeconfig")
	writeKubeconfig(t, dev, "https://"+refusedAddress(t), "envtest")
	bin := filepath.Join(dir, "operator")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--dev-control-plane=auto", "--dev-dir", filepath.Join(dir, ".dev"), "--metrics-bind-address=0", "--health-probe-bind-address=0")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+dev)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the operator started against a stopped cluster:\n%s", out)
	}
	if !strings.Contains(string(out), "is the kubeconfig of an earlier `make run`") {
		t.Errorf("the operator's output does not name the stopped make run:\n%s", out)
	}
}
