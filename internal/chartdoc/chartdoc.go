/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package chartdoc renders a chart's README from its values.yaml: one table row per value, the
// comment above the key as its description, so the values file stays the one place to document a
// value (`go run ./hack/chartdoc` writes it; test/chart fails when it is stale).
package chartdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Render is the README: header (the chart's own prose), then the values table.
func Render(header string, values []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values.yaml is not a mapping")
	}
	var out bytes.Buffer
	out.WriteString(header)
	out.WriteString("\n## Values\n\n<!-- Generated from values.yaml by `go run ./hack/chartdoc`; edit the comments there. -->\n\n")
	out.WriteString("| value | default | description |\n|---|---|---|\n")
	if err := rows(&out, "", doc.Content[0], ""); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// rows writes a row per key of m: leaves, lists and empty maps with their default; a non-empty map
// with a comment gets a row of its own, then its keys. inherited is a parent's comment, used when
// a key has none of its own.
func rows(out *bytes.Buffer, prefix string, m *yaml.Node, inherited string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		path := prefix + k.Value
		desc := comment(k.HeadComment)
		if v.Kind == yaml.MappingNode && len(v.Content) > 0 {
			if desc != "" {
				fmt.Fprintf(out, "| `%s` | | %s |\n", path, cell(desc))
			}
			if err := rows(out, path+".", v, ""); err != nil {
				return err
			}
			continue
		}
		var val any
		if err := v.Decode(&val); err != nil {
			return err
		}
		def, err := json.Marshal(val)
		if err != nil {
			return err
		}
		if desc == "" {
			desc = inherited
		}
		fmt.Fprintf(out, "| `%s` | `%s` | %s |\n", path, strings.ReplaceAll(string(def), "|", `\|`), cell(desc))
	}
	return nil
}

// comment is a YAML head comment as one line of text, without the leading "#".
func comment(c string) string {
	var parts []string
	for _, l := range strings.Split(c, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
