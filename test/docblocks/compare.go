/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package docblocks

import (
	"regexp"
	"sort"
	"strings"
)

var (
	// Kubernetes' random suffixes (pod-template hash, pod name) use this alphabet.
	podName = regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	rsName  = regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{6,10}$`)
	age     = regexp.MustCompile(`^[0-9]+[smhd]([0-9]+[smh])?$`)
)

// Comparable is kubectl's output as a page can promise it: random name suffixes and ages
// replaced, columns by single spaces (their width follows the names), blank lines dropped, lines
// sorted (kubectl sorts by name, and names carry the random suffixes).
func Comparable(out string) []string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for i, f := range fields {
			switch {
			case age.MatchString(f):
				fields[i] = "<age>"
			case podName.MatchString(f):
				fields[i] = podName.ReplaceAllString(f, "$1-<hash>-<id>")
			case rsName.MatchString(f):
				fields[i] = rsName.ReplaceAllString(f, "$1-<hash>")
			}
		}
		lines = append(lines, strings.Join(fields, " "))
	}
	sort.Strings(lines)
	return lines
}
