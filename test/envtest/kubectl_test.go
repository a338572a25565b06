/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// writeKubeconfig adds user to the control plane of e and writes a kubeconfig for it, for the
// real kubectl and helm binaries.
func writeKubeconfig(e *envtest.Environment, user envtest.User, dir string) string {
	u, err := e.AddUser(user, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, strings.NewReplacer(":", "_", "/", "_").Replace(user.Name)+".kubeconfig")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

var (
	adminKubeconfigOnce sync.Once
	adminKubeconfigPath string
)

// adminKubeconfig is a kubeconfig of a cluster admin of the suite's control plane.
func adminKubeconfig() string {
	adminKubeconfigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "llmkube-kubeconfig-")
		Expect(err).NotTo(HaveOccurred())
		adminKubeconfigPath = writeKubeconfig(env, envtest.User{Name: "suite-admin", Groups: []string{"system:masters"}}, dir)
	})
	return adminKubeconfigPath
}

// kubectlBinary is the kubectl beside the control plane binaries (make envtest-bin puts or builds
// one there), else the one on PATH.
func kubectlBinary() string {
	if p := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"); os.Getenv("KUBEBUILDER_ASSETS") != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("kubectl")
	Expect(err).NotTo(HaveOccurred(), "no kubectl: run the suite with `make test`")
	return p
}

// kubectl runs the real kubectl against the suite's control plane as a cluster admin, with stdin
// as its standard input, and returns stdout and an error holding stderr.
func kubectl(stdin string, args ...string) (string, error) {
	return kubectlAt(adminKubeconfig(), stdin, args...)
}

// kubectlAt is kubectl against the control plane of kubeconfig.
func kubectlAt(kubeconfig, stdin string, args ...string) (string, error) {
	cmd := exec.Command(kubectlBinary(), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	GinkgoWriter.Printf("kubectl %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	if err != nil {
		return stdout.String(), &kubectlError{err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

type kubectlError struct {
	err    error
	stderr string
}

func (e *kubectlError) Error() string { return e.err.Error() + ": " + e.stderr }

// applyAs is `kubectl apply --server-side --field-manager=manager -f -` of manifest.
func applyAs(manager, manifest string, extra ...string) (string, error) {
	return kubectl(manifest, append([]string{"apply", "--server-side", "--field-manager=" + manager, "-f", "-"}, extra...)...)
}
