/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command release is what `make base`, `make images` and `make plugin-archives` run: it assembles
// images and archives from binaries the Makefile built, with go-containerregistry, no Docker daemon.
//
//	release base   -ca FILE -created UNIX -platforms linux/amd64,linux/arm64 -out DIR
//	release image  -base REF|oci:DIR -binary NAME -bin linux/amd64=PATH ... -label K=V ... -created UNIX
//	               (-push REPO:TAG | -out DIR -tag TAG) [-digest-file FILE]
//	release plugin -bin linux/amd64=PATH ... -license FILE -manifest TEMPLATE -tag TAG -created UNIX -out DIR
//	release chart  -created UNIX ARCHIVE   (rewrites `helm package`'s archive with one timestamp)
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/llmkube/operator/internal/release"
)

// pairs is a repeated K=V flag.
type pairs map[string]string

func (p pairs) String() string { return fmt.Sprint(map[string]string(p)) }
func (p pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	p[k] = v
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: release base|image|plugin|chart [flags]"))
	}
	var err error
	switch os.Args[1] {
	case "base":
		err = base(os.Args[2:])
	case "image":
		err = image(os.Args[2:])
	case "plugin":
		err = plugin(os.Args[2:])
	case "chart":
		err = chart(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q: base, image, plugin or chart", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(1)
}

// unixTime parses the commit time (git log -1 --format=%ct), the one timestamp of every output.
func unixTime(s string) (time.Time, error) {
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("-created: %w", err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

func base(args []string) error {
	fs := flag.NewFlagSet("base", flag.ExitOnError)
	ca := fs.String("ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put at /etc/ssl/certs/ca-certificates.crt.")
	created := fs.String("created", "0", "Timestamp of the layer's files and the configs (Unix seconds).")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "Comma-separated platforms.")
	out := fs.String("out", "build/base", "OCI layout to write.")
	_ = fs.Parse(args)
	t, err := unixTime(*created)
	if err != nil {
		return err
	}
	bundle, err := os.ReadFile(*ca)
	if err != nil {
		return err
	}
	var ps []v1.Platform
	for _, s := range strings.Split(*platforms, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		ps = append(ps, *p)
	}
	idx, err := release.LocalBase(bundle, t, ps)
	if err != nil {
		return err
	}
	if err := release.WriteLayout(*out, idx, "base"); err != nil {
		return err
	}
	return report(idx, "oci:"+*out, "")
}

func image(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	baseRef := fs.String("base", "", "Base image index: a registry reference pinned by digest, or oci:DIR.")
	binary := fs.String("binary", "", "File name of the binary at the image's root (the entry point).")
	bins, labels := pairs{}, pairs{}
	fs.Var(bins, "bin", "PLATFORM=PATH of a static binary (repeated).")
	fs.Var(labels, "label", "OCI label KEY=VALUE (repeated).")
	created := fs.String("created", "0", "Commit time (Unix seconds).")
	push := fs.String("push", "", "Push to this REPOSITORY:TAG.")
	out := fs.String("out", "", "Else write an OCI layout here.")
	tag := fs.String("tag", "", "Name of the index in the OCI layout.")
	digestFile := fs.String("digest-file", "", "Write the index's digest here.")
	_ = fs.Parse(args)
	t, err := unixTime(*created)
	if err != nil {
		return err
	}
	if *baseRef == "" || *binary == "" || len(bins) == 0 || (*push == "") == (*out == "") {
		return fmt.Errorf("image needs -base, -binary, -bin and exactly one of -push and -out")
	}
	b, err := release.LoadIndex(*baseRef)
	if err != nil {
		return fmt.Errorf("base %s: %w", *baseRef, err)
	}
	idx, err := release.Build(b, release.Image{Binary: *binary, Binaries: bins, Labels: labels, Created: t})
	if err != nil {
		return err
	}
	where := *push
	if *push != "" {
		err = release.Push(*push, idx)
	} else {
		err, where = release.WriteLayout(*out, idx, *tag), "oci:"+*out
	}
	if err != nil {
		return err
	}
	return report(idx, where, *digestFile)
}

// report prints where the index went and its digest, and writes the digest to file when given.
func report(idx v1.ImageIndex, where, file string) error {
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s\n", where, d)
	if file == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(d.String()+"\n"), 0o644)
}

func plugin(args []string) error {
	fs := flag.NewFlagSet("plugin", flag.ExitOnError)
	bins := pairs{}
	fs.Var(bins, "bin", "OS/ARCH=PATH of kubectl-llmkube (repeated).")
	license := fs.String("license", "LICENSE", "License file to ship in each archive.")
	manifest := fs.String("manifest", "plugins/llmkube.yaml", "Krew manifest template.")
	tag := fs.String("tag", "", "Release tag (v0.1.0).")
	created := fs.String("created", "0", "Commit time (Unix seconds).")
	out := fs.String("out", "build/plugin", "Folder of the archives, the filled-in manifest and checksums.txt.")
	_ = fs.Parse(args)
	t, err := unixTime(*created)
	if err != nil {
		return err
	}
	lic, err := os.ReadFile(*license)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	platforms := make([]string, 0, len(bins))
	for p := range bins {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	sums := map[string]string{}
	var checksums bytes.Buffer
	for _, p := range platforms {
		bin, err := os.ReadFile(bins[p])
		if err != nil {
			return err
		}
		name := "kubectl-llmkube_" + strings.ReplaceAll(p, "/", "_") + ".tar.gz"
		var archive bytes.Buffer
		if err := release.PluginArchive(&archive, "kubectl-llmkube", bin, lic, t); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, name), archive.Bytes(), 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(archive.Bytes())
		sums[name] = hex.EncodeToString(sum[:])
		fmt.Fprintf(&checksums, "%s  %s\n", sums[name], name)
	}
	tmpl, err := os.ReadFile(*manifest)
	if err != nil {
		return err
	}
	filled, err := release.KrewManifest(tmpl, *tag, sums)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "llmkube.yaml"), filled, 0o644); err != nil {
		return err
	}
	fmt.Print(checksums.String())
	return os.WriteFile(filepath.Join(*out, "checksums.txt"), checksums.Bytes(), 0o644)
}

func chart(args []string) error {
	fs := flag.NewFlagSet("chart", flag.ExitOnError)
	created := fs.String("created", "0", "Timestamp of every entry of the archive (Unix seconds).")
	_ = fs.Parse(args)
	t, err := unixTime(*created)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("chart: one archive, got %v", fs.Args())
	}
	path := fs.Arg(0)
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := release.RestampChart(in, t)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
