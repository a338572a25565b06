/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

var commitTime = time.Unix(1796104842, 0).UTC()

func platforms(t *testing.T, ss ...string) []v1.Platform {
	t.Helper()
	var out []v1.Platform
	for _, s := range ss {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *p)
	}
	return out
}

// testImage builds an operator-like index over two fake binaries written under dir.
func testImage(t *testing.T, dir string, created time.Time) v1.ImageIndex {
	t.Helper()
	base, err := LocalBase([]byte("-----BEGIN CERTIFICATE-----\n"), created, platforms(t, "linux/amd64", "linux/arm64"))
	if err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		path := filepath.Join(dir, strings.ReplaceAll(p, "/", "_"))
		if err := os.WriteFile(path, []byte("binary for "+p), 0o600); err != nil {
			t.Fatal(err)
		}
		bins[p] = path
	}
	idx, err := Build(base, Image{
		Binary: "llmkube-operator", Binaries: bins, Created: created,
		Labels: map[string]string{"org.opencontainers.image.licenses": "Apache-2.0", "org.opencontainers.image.version": "0.1.0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func digest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTwoBuildsOfOneCommitHaveOneDigest(t *testing.T) {
	// Two folders, two file modes and times on disk: only content and the commit time count.
	a, b := digest(t, testImage(t, t.TempDir(), commitTime)), digest(t, testImage(t, t.TempDir(), commitTime))
	if a != b {
		t.Fatalf("two builds of the same inputs: %s and %s", a, b)
	}
	if c := digest(t, testImage(t, t.TempDir(), commitTime.Add(time.Second))); c == a {
		t.Fatalf("another commit time gave the same digest %s: the timestamp is not stamped", c)
	}
}

func TestImageRunsTheBinaryAsNonRootPerPlatform(t *testing.T) {
	idx := testImage(t, t.TempDir(), commitTime)
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 || m.Annotations["org.opencontainers.image.licenses"] != "Apache-2.0" {
		t.Fatalf("index: %d manifests, annotations %v; want 2 and the OCI labels", len(m.Manifests), m.Annotations)
	}
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != d.Platform.Architecture || cf.OS != "linux" {
			t.Errorf("%s: config is %s/%s", d.Platform, cf.OS, cf.Architecture)
		}
		if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/llmkube-operator" || cf.Config.Cmd != nil {
			t.Errorf("%s: user %q entrypoint %v cmd %v; want 65532:65532, [/llmkube-operator], none", d.Platform, cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd)
		}
		if cf.Config.Labels["org.opencontainers.image.version"] != "0.1.0" || !cf.Created.Time.Equal(commitTime) {
			t.Errorf("%s: labels %v created %s", d.Platform, cf.Config.Labels, cf.Created)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		files := tarFiles(t, layers[len(layers)-1])
		if got := string(files["llmkube-operator"]); got != "binary for "+d.Platform.String() {
			t.Errorf("%s: top layer's binary is %q", d.Platform, got)
		}
		if _, ok := tarFiles(t, layers[0])["etc/passwd"]; !ok {
			t.Errorf("%s: the base layer has no /etc/passwd", d.Platform)
		}
	}
}

func tarFiles(t *testing.T, l v1.Layer) map[string][]byte {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = data
	}
}

func TestBuildRefusesAPlatformTheBaseLacks(t *testing.T) {
	base, err := LocalBase(nil, commitTime, platforms(t, "linux/amd64"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(base, Image{Binary: "x", Binaries: map[string]string{"linux/arm64": "/dev/null"}, Created: commitTime})
	if err == nil || !strings.Contains(err.Error(), "no linux/arm64 image") {
		t.Fatalf("err = %v; want the missing platform named", err)
	}
}

func TestPluginArchiveHoldsBinaryAndLicenseReproducibly(t *testing.T) {
	var a, b bytes.Buffer
	for _, w := range []*bytes.Buffer{&a, &b} {
		if err := PluginArchive(w, "kubectl-llmkube", []byte("bin"), []byte("Apache"), commitTime); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two archives of the same files differ")
	}
	zr, err := gzip.NewReader(&a)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "LICENSE,kubectl-llmkube" {
		t.Fatalf("archive holds %v", names)
	}
}

func TestKrewManifestNamesEachArchiveWithItsSha256(t *testing.T) {
	tmpl, err := os.ReadFile("../../plugins/llmkube.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{
		"kubectl-llmkube_linux_amd64.tar.gz": "aa", "kubectl-llmkube_linux_arm64.tar.gz": "bb", "kubectl-llmkube_darwin_arm64.tar.gz": "cc",
	}
	out, err := KrewManifest(tmpl, "v0.1.0", sums)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"version: v0.1.0",
		"uri: https://github.com/llmkube/operator/releases/download/v0.1.0/kubectl-llmkube_linux_arm64.tar.gz\n    sha256: bb",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("manifest lacks %q:\n%s", want, out)
		}
	}
	delete(sums, "kubectl-llmkube_darwin_arm64.tar.gz")
	if _, err := KrewManifest(tmpl, "v0.1.0", sums); err == nil || !strings.Contains(err.Error(), "darwin_arm64") {
		t.Fatalf("err = %v; want the archive that was not built named", err)
	}
}
