/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is the user and group every image runs as: distroless's "nonroot", so a local base and
// the release base agree, and the chart's runAsUser (when set) matches both.
const NonRoot = 65532

// LocalBase is a minimal static base for each platform: a CA bundle, /etc/passwd and /etc/group
// with root and nonroot (65532), a nonroot home and a sticky /tmp. It stands in for the pinned
// distroless base where no registry can be reached; its content matches what the operator and the
// proxy need from distroless/static (TLS roots, a non-root user), not the rest (tzdata, os-release).
//
// Note: the layer holds no architecture-specific bytes, so every platform shares one layer.
func LocalBase(caBundle []byte, created time.Time, platforms []v1.Platform) (v1.ImageIndex, error) {
	files := []File{
		{Path: "etc", Mode: 0o755, Dir: true},
		{Path: "etc/ssl", Mode: 0o755, Dir: true},
		{Path: "etc/ssl/certs", Mode: 0o755, Dir: true},
		{Path: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: caBundle},
		{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{Path: "home", Mode: 0o755, Dir: true},
		{Path: "home/nonroot", Mode: 0o700, UID: NonRoot, GID: NonRoot, Dir: true},
		{Path: "tmp", Mode: 0o1777, Dir: true},
	}
	l, err := layer(files, created)
	if err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "llmkube local base: CA bundle, passwd, group, /tmp"}})
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
		cf.Created = v1.Time{Time: created}
		cf.Config.User = "65532:65532"
		cf.Config.WorkingDir = "/home/nonroot"
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		platform := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	return idx, nil
}
