/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package kubescore runs kube-score (pinned as a Go tool in hack/tools/kubescore) on manifests,
// ignoring exactly the checks hack/kube-score.ignore names and justifies.
package kubescore

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/llmkube/operator/test/helmtool"
)

// IgnoreFile is the one place that names the checks left ignored, each with its reason.
func IgnoreFile() string { return filepath.Join(helmtool.RepoRoot(), "hack", "kube-score.ignore") }

// Args are kube-score's flags from IgnoreFile: --ignore-test per check id, and the flags listed.
func Args() ([]string, error) {
	f, err := os.Open(IgnoreFile())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var args []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "--"):
			args = append(args, line)
		default:
			args = append(args, "--ignore-test", line)
		}
	}
	return args, s.Err()
}

// Score runs `kube-score score` on the YAML in manifests and returns its report; the error holds the
// report when a check is CRITICAL or WARNING.
func Score(manifests []byte) (string, error) {
	ignore, err := Args()
	if err != nil {
		return "", err
	}
	args := append([]string{"tool", "-modfile=hack/tools/kubescore/go.mod", "kube-score", "score", "-", "--output-format", "ci"}, ignore...)
	cmd := exec.Command("go", args...)
	cmd.Dir = helmtool.RepoRoot()
	cmd.Stdin = bytes.NewReader(manifests)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	runErr := cmd.Run()
	var failed []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "[CRITICAL]") || strings.HasPrefix(l, "[WARNING]") {
			failed = append(failed, l)
		}
	}
	if len(failed) > 0 {
		return out.String(), fmt.Errorf("kube-score:\n%s", strings.Join(failed, "\n"))
	}
	if runErr != nil {
		return out.String(), fmt.Errorf("kube-score: %w\n%s", runErr, stderr.String())
	}
	return out.String(), nil
}
