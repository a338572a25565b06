/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package release

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"strings"
	"text/template"
	"time"
)

// PluginArchive writes the tar.gz krew installs for one platform: the plugin binary and LICENSE.
//
// Note: the gzip header carries no name and no time, and the tar headers only modTime, so the
// archive (and the sha256 the manifest names) depends on the two files alone.
func PluginArchive(w io.Writer, binaryName string, binary, license []byte, modTime time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := writeTar(zw, []File{
		{Path: binaryName, Mode: 0o755, Data: binary},
		{Path: "LICENSE", Mode: 0o644, Data: license},
	}, modTime); err != nil {
		return err
	}
	return zw.Close()
}

// KrewManifest renders the krew manifest template (the form krew-release-bot fills in) for tag:
// each `{{ addURIAndSha "URL" .TagName }}` becomes the archive's uri and the sha256 of the local
// archive with the URL's file name, from sums.
func KrewManifest(tmpl []byte, tag string, sums map[string]string) ([]byte, error) {
	var missing []string
	t, err := template.New("krew").Funcs(template.FuncMap{
		"addURIAndSha": func(url, tag string) string {
			url = strings.ReplaceAll(url, "{{ .TagName }}", tag)
			sum, ok := sums[path.Base(url)]
			if !ok {
				missing = append(missing, path.Base(url))
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", url, sum)
		},
	}).Parse(string(tmpl))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, map[string]string{"TagName": tag}); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the krew manifest names archives that were not built: %s", strings.Join(missing, ", "))
	}
	return out.Bytes(), nil
}
