/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// layoutPrefix marks a base or an output that is an OCI image layout on disk, not a registry
// reference.
const layoutPrefix = "oci:"

// LoadIndex reads an image index: "oci:DIR" is the first index of the OCI layout DIR, anything
// else a registry reference (a release pins its base by digest).
func LoadIndex(ref string) (v1.ImageIndex, error) {
	if dir, ok := strings.CutPrefix(ref, layoutPrefix); ok {
		root, err := layout.ImageIndexFromPath(dir)
		if err != nil {
			return nil, err
		}
		m, err := root.IndexManifest()
		if err != nil {
			return nil, err
		}
		if len(m.Manifests) == 0 {
			return nil, fmt.Errorf("the OCI layout %s holds no index", dir)
		}
		return root.ImageIndex(m.Manifests[0].Digest)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	return remote.Index(r, remote.WithAuthFromKeychain(authn.DefaultKeychain))
}

// WriteLayout replaces dir with an OCI layout holding idx, named tag.
func WriteLayout(dir string, idx v1.ImageIndex, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag}))
}

// Push writes idx to the registry reference ref (repository:tag). Loopback and private
// registries are spoken to over plain HTTP, as go-containerregistry does for them.
func Push(ref string, idx v1.ImageIndex) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	return remote.WriteIndex(r, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain))
}
