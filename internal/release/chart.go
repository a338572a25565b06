/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"time"
)

// RestampChart rewrites a chart archive that `helm package` wrote with every entry's time set to
// modTime, so two packagings of one commit are byte-identical.
//
// Note: helm 3 stamps each tar header with the time of packaging (chartutil's writeToTar uses
// time.Now()) and offers no option against it; the gzip header it writes carries no time. The
// entries, their order, their modes and the gzip header's extra field (helm's provenance marker)
// are kept as they are.
func RestampChart(in []byte, modTime time.Time) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(in))
	if err != nil {
		return nil, fmt.Errorf("chart archive: %w", err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Header = zr.Header
	zw.Header.ModTime = time.Time{}
	tr, tw := tar.NewReader(zr), tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("chart archive: %w", err)
		}
		h.ModTime, h.AccessTime, h.ChangeTime = modTime, time.Time{}, time.Time{}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
