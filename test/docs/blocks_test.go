/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package docs

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/llmkube/operator/test/docblocks"
)

// pages are the Markdown files a reader follows: the README, docs/ and the guide to the benchmark
// reports (the reports in docs/benchmarks are written by the benchmarks and hold no commands).
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "docs", "benchmarks", "README.md")}, files...)
}

// runners finds, for each run ID, the test files that run its blocks: those that call
// docblocks.Runnable with the ID as a literal.
func runners(t *testing.T) map[string][]string {
	t.Helper()
	call := regexp.MustCompile(`(?m)docblocks\.Runnable\(.*"([^"]+)"\)\s*$`)
	out := map[string][]string{}
	eachTestFile(t, root, func(path, text string) {
		for _, m := range call.FindAllStringSubmatch(text, -1) {
			out[m[1]] = append(out[m[1]], path)
		}
	})
	return out
}

// The docs cannot rot silently: every shell block of the README and docs/ is run by a test
// (`<!-- run: ID -->`, and a test that runs the blocks of that ID exists) or says why it cannot be
// (`<!-- not run: why -->`), and every fence names its language.
func TestEveryShellBlockIsRunOrMarked(t *testing.T) {
	run := runners(t)
	for _, page := range pages(t) {
		blocks, err := docblocks.Parse(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			switch {
			case b.Info == "":
				t.Errorf("%s: a fence without a language (sh for commands, text for output, yaml, ...)", b)
			case b.Run != "" && b.NotRun != "":
				t.Errorf("%s: marked both run and not run", b)
			case b.Run != "" && len(run[b.Run]) == 0:
				t.Errorf("%s: marked <!-- run: %s -->, but no test calls docblocks.Runnable(..., %q)", b, b.Run, b.Run)
			case b.Shell() && b.Run == "" && b.NotRun == "":
				t.Errorf("%s: a %s block that no test runs: mark it <!-- run: ID --> and run it in a test, or <!-- not run: why --> on the line before the fence", b, b.Info)
			}
		}
	}
}
