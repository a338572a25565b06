/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"fmt"
	"os"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Image describes one of the release's images: a binary per platform on a base.
type Image struct {
	// Binary is the file name of the binary at the image's root, and the entry point.
	Binary string
	// Binaries maps a platform ("linux/amd64") to the static binary built for it.
	Binaries map[string]string
	// Labels are set on every platform's config and as annotations of the index
	// (org.opencontainers.image.*: source, revision, version, licenses, created).
	Labels map[string]string
	// Created stamps the configs, the history and the layer's files: the commit's time.
	Created time.Time
}

// Build is the image's index: for each platform of Binaries (sorted), the base's image of that
// platform plus one layer holding the binary, run as NonRoot with the binary as entry point.
func Build(base v1.ImageIndex, im Image) (v1.ImageIndex, error) {
	platforms := make([]string, 0, len(im.Binaries))
	for p := range im.Binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, ps := range platforms {
		p, err := v1.ParsePlatform(ps)
		if err != nil {
			return nil, err
		}
		baseImg, err := imageFor(base, *p)
		if err != nil {
			return nil, err
		}
		bin, err := os.ReadFile(im.Binaries[ps])
		if err != nil {
			return nil, err
		}
		l, err := layer([]File{{Path: im.Binary, Mode: 0o755, Data: bin}}, im.Created)
		if err != nil {
			return nil, err
		}
		img, err := mutate.Append(baseImg, mutate.Addendum{Layer: l, History: v1.History{
			Created: v1.Time{Time: im.Created}, CreatedBy: "llmkube release: /" + im.Binary,
		}})
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.Created = v1.Time{Time: im.Created}
		cf.Config.User = fmt.Sprintf("%d:%d", NonRoot, NonRoot)
		cf.Config.Entrypoint = []string{"/" + im.Binary}
		cf.Config.Cmd = nil
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		for k, v := range im.Labels {
			cf.Config.Labels[k] = v
		}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return mutate.Annotations(idx, im.Labels).(v1.ImageIndex), nil
}

// imageFor is the base's image of platform p.
func imageFor(base v1.ImageIndex, p v1.Platform) (v1.Image, error) {
	m, err := base.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == p.OS && d.Platform.Architecture == p.Architecture && (p.Variant == "" || d.Platform.Variant == p.Variant) {
			return base.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the base image has no %s image", p.String())
}
