/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/llmkube/operator/test/helmtool"
	"github.com/llmkube/operator/version"
)

// The release path a user takes, end to end on loopback: `make images` and `make chart` push to an
// OCI registry (go-containerregistry's, in process), `helm install` pulls the chart from it, the
// Deployment names the pushed images, and the binaries pulled back out of the images run.
//
// Note: only the host's platform is built here (the release builds linux/amd64 and linux/arm64 with
// the same target); the build reuses the module cache, and its second run the build cache.
var _ = Describe("Release", Ordered, func() {
	var (
		host     string // 127.0.0.1:PORT of the registry
		repo     string // host/llmkube, the REGISTRY of make
		platform string
		digests  = map[string]string{}
	)

	BeforeAll(func() {
		if runtime.GOOS != "linux" {
			Skip("the images are linux images: their binaries run on a linux host only")
		}
		platform = "linux/" + runtime.GOARCH
		srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		DeferCleanup(srv.Close)
		host = strings.TrimPrefix(srv.URL, "http://")
		repo = host + "/llmkube"
	})

	// make runs a target of the repository's Makefile with the release's variables.
	makeRelease := func(buildDir string, extra ...string) {
		args := append([]string{"-C", helmtool.RepoRoot(), "BASE_IMAGE=local", "PLATFORMS=" + platform, "BUILD_DIR=" + buildDir}, extra...)
		cmd := exec.Command("make", args...)
		cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
		Expect(cmd.Run()).To(Succeed(), "make %v", args)
	}
	readDigest := func(buildDir, image string) string {
		data, err := os.ReadFile(filepath.Join(buildDir, "images", image+".digest"))
		Expect(err).NotTo(HaveOccurred())
		return strings.TrimSpace(string(data))
	}

	It("pushes both images and the chart, and a second build of the commit has the same digests", func() {
		pushed := GinkgoT().TempDir()
		makeRelease(pushed, "REGISTRY="+repo, "HELM_PUSH_FLAGS=--plain-http", "images", "chart")
		local := GinkgoT().TempDir()
		makeRelease(local, "images")
		for _, image := range []string{"operator", "router-proxy"} {
			digests[image] = readDigest(pushed, image)
			Expect(digests[image]).To(HavePrefix("sha256:"))
			Expect(readDigest(local, image)).To(Equal(digests[image]), "%s: a rebuild of the same commit has another digest", image)
			ref, err := name.ParseReference(repo + "/" + image + ":" + version.Version)
			Expect(err).NotTo(HaveOccurred())
			desc, err := remote.Head(ref)
			Expect(err).NotTo(HaveOccurred())
			Expect(desc.Digest.String()).To(Equal(digests[image]), "%s: the registry's tag names another digest", image)
		}
	})

	It("helm installs the chart from the registry, and the Deployment names the pushed images", func() {
		Expect(digests).To(HaveLen(2), "the push spec failed")
		const ns, rel = "release-e2e", "release-e2e"
		out, err := helmtool.Run("install", rel, "oci://"+repo+"/charts/llmkube", "--version", version.Version, "--plain-http",
			"--namespace", ns, "--create-namespace", "--kubeconfig", adminKubeconfig(), "--set", "crds.install=false",
			"--set", "image.repository="+repo+"/operator", "--set", "image.digest="+digests["operator"],
			"--set", "routerProxy.image.repository="+repo+"/router-proxy")
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("%s", out)
		DeferCleanup(func() { _, _ = helmtool.Run("uninstall", rel, "--namespace", ns, "--kubeconfig", adminKubeconfig()) })

		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: rel + "-llmkube"}, dep)).To(Succeed())
		c := dep.Spec.Template.Spec.Containers[0]
		Expect(c.Image).To(Equal(repo + "/operator@" + digests["operator"]))
		Expect(c.Args).To(ContainElement("--router-proxy-image=" + repo + "/router-proxy:" + version.Version))
	})

	It("pulls the images back, and their binaries run: the operator's version, the proxy's refusal of a missing document", func() {
		Expect(digests).To(HaveLen(2), "the push spec failed")
		dir := GinkgoT().TempDir()
		operator := pullBinary(repo+"/operator@"+digests["operator"], platform, "llmkube-operator", dir)
		out, err := exec.Command(operator, "--version").Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(string(out))).To(Equal(version.Version))

		proxy := pullBinary(repo+"/router-proxy:"+version.Version, platform, "router-proxy", dir)
		cmd := exec.Command(proxy, "--config", filepath.Join(dir, "missing.json"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		var exit *exec.ExitError
		Expect(errors.As(err, &exit)).To(BeTrue(), "router-proxy without its document: %v", err)
		Expect(exit.ExitCode()).To(Equal(1))
		Expect(stderr.String()).To(And(ContainSubstring("router-proxy cannot start"), ContainSubstring("missing.json: no such file")))
	})
})

// pullBinary pulls ref's image for platform, checks it runs binary as the entry point and as user
// 65532, and writes the binary from the image's layers to dir.
func pullBinary(ref, platform, binary, dir string) string {
	GinkgoHelper()
	r, err := name.ParseReference(ref)
	Expect(err).NotTo(HaveOccurred())
	p, err := v1.ParsePlatform(platform)
	Expect(err).NotTo(HaveOccurred())
	img, err := remote.Image(r, remote.WithPlatform(*p))
	Expect(err).NotTo(HaveOccurred())
	cf, err := img.ConfigFile()
	Expect(err).NotTo(HaveOccurred())
	Expect(cf.Config.Entrypoint).To(Equal([]string{"/" + binary}))
	Expect(cf.Config.User).To(Equal("65532:65532"))
	Expect(cf.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.version", version.Version))
	Expect(cf.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.licenses", "Apache-2.0"))
	layers, err := img.Layers()
	Expect(err).NotTo(HaveOccurred())
	for _, l := range layers {
		rc, err := l.Uncompressed()
		Expect(err).NotTo(HaveOccurred())
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			Expect(err).NotTo(HaveOccurred())
			if h.Name != binary {
				continue
			}
			path := filepath.Join(dir, binary)
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
			Expect(err).NotTo(HaveOccurred())
			_, err = io.Copy(f, tr)
			Expect(err).NotTo(HaveOccurred())
			Expect(f.Close()).To(Succeed())
			Expect(rc.Close()).To(Succeed())
			return path
		}
		Expect(rc.Close()).To(Succeed())
	}
	Fail("no /" + binary + " in " + ref)
	return ""
}
