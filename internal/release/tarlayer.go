/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"archive/tar"
	"bytes"
	"io"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of a layer or archive: a regular file when Dir is false.
type File struct {
	Path     string // relative, slash-separated, without a leading slash
	Mode     int64
	UID, GID int
	Dir      bool
	Data     []byte
}

// writeTar writes files sorted by path, every header stamped with modTime and no user or group
// names, so the bytes depend on the content alone.
func writeTar(w io.Writer, files []File, modTime time.Time) error {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	tw := tar.NewWriter(w)
	for _, f := range sorted {
		h := &tar.Header{
			Name: f.Path, Mode: f.Mode, Uid: f.UID, Gid: f.GID,
			ModTime: modTime, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.Data)),
		}
		if f.Dir {
			h.Typeflag, h.Size, h.Name = tar.TypeDir, 0, f.Path+"/"
		}
		// PAX records would carry access and change times; USTAR keeps only ModTime.
		h.Format = tar.FormatUSTAR
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !f.Dir {
			if _, err := tw.Write(f.Data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// layer is an OCI layer (gzip) of files.
func layer(files []File, modTime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	if err := writeTar(&buf, files, modTime); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
