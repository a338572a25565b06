/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package docs checks the repository's documentation against its tests, without a control plane:
// every numbered promise is proved by a test that cites it, no test cites a promise that does not
// exist, every shell block is run by a test or says why not, and every link lands.
package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository, seen from this package's directory (where go test runs).
const root = "../.."

// prefixes are the promise series, one per page (docs/architecture.md lists them). A citation
// with one of these prefixes must name a promise that exists, even when a page lost its series.
var prefixes = []string{"O", "U", "W", "GO", "G", "M", "R", "L", "P", "F", "H", "D", "E", "A", "N", "K"}

var (
	// A promise is a list item that starts with its number in bold: `- **O1.** ...`.
	promiseDef = regexp.MustCompile(`(?m)^\s*[-*]\s+\*\*([A-Z]{1,2}[0-9]+)\.\*\*`)
	// A Ginkgo description cites promises in brackets: It("... [O1, O9]").
	bracketCite = regexp.MustCompile(`\[([A-Z]{1,2}[0-9]+(?:,\s*[A-Z]{1,2}[0-9]+)*)\]`)
	// A plain Go test cites them in a comment: `// Proves O1.` or `// Proves O1, O2 ...`.
	commentCite = regexp.MustCompile(`//\s*Proves\s+([A-Z]{1,2}[0-9]+(?:,\s*[A-Z]{1,2}[0-9]+)*)`)
	codeSplit   = regexp.MustCompile(`[A-Z]{1,2}[0-9]+`)
	codePrefix  = regexp.MustCompile(`^[A-Z]+`)
)

type place struct {
	file string
	line int
}

func (p place) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

func lineOf(text string, offset int) int { return strings.Count(text[:offset], "\n") + 1 }

// eachTestFile calls fn with the path and text of every _test.go file under repo, leaving out
// .git, testdata, the dev cluster's state (.dev), built binaries (bin), and the directories skip
// names.
func eachTestFile(t *testing.T, repo string, fn func(path, text string), skip ...string) {
	t.Helper()
	skipped := map[string]bool{}
	for _, dir := range skip {
		abs, _ := filepath.Abs(dir)
		skipped[abs] = true
	}
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			abs, _ := filepath.Abs(path)
			if name := d.Name(); name == ".git" || name == "testdata" || name == ".dev" || name == "bin" || skipped[abs] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// promises are the numbered promises of docs/*.md, by number.
func promises(t *testing.T, docsDir string) map[string][]place {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string][]place{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range promiseDef.FindAllStringSubmatchIndex(text, -1) {
			code := text[m[2]:m[3]]
			defs[code] = append(defs[code], place{f, lineOf(text, m[0])})
		}
	}
	return defs
}

// citations are the promise numbers the repository's tests cite, by number.
func citations(t *testing.T, repo string) map[string][]place {
	t.Helper()
	known := map[string]bool{}
	for _, p := range prefixes {
		known[p] = true
	}
	cites := map[string][]place{}
	eachTestFile(t, repo, func(path, text string) {
		for _, re := range []*regexp.Regexp{bracketCite, commentCite} {
			for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
				for _, code := range codeSplit.FindAllString(text[m[2]:m[3]], -1) {
					if known[codePrefix.FindString(code)] {
						cites[code] = append(cites[code], place{path, lineOf(text, m[0])})
					}
				}
			}
		}
	}, ".")
	return cites
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// A reader goes from a promise to its proof with one search: every numbered promise of docs/ is
// cited by at least one test, each number is defined once, and in a series every known prefix.
func TestEveryPromiseIsCitedByATest(t *testing.T) {
	defs := promises(t, filepath.Join(root, "docs"))
	if len(defs) == 0 {
		t.Fatal("no numbered promise in docs/*.md: the pattern `- **O1.** ...` found nothing")
	}
	cites := citations(t, root)
	for _, code := range sortedKeys(defs) {
		if len(defs[code]) > 1 {
			t.Errorf("promise %s is defined %d times: %v", code, len(defs[code]), defs[code])
		}
		if len(cites[code]) == 0 {
			t.Errorf("%s: promise %s is cited by no test (cite it as [%s] in the Ginkgo description of the spec that proves it, or as // Proves %s. above a Go test)",
				defs[code][0], code, code, code)
		}
	}
}

// No test claims to prove a promise the docs do not make.
func TestEveryCitationNamesAPromise(t *testing.T) {
	defs := promises(t, filepath.Join(root, "docs"))
	cites := citations(t, root)
	for _, code := range sortedKeys(cites) {
		if len(defs[code]) == 0 {
			for _, p := range cites[code] {
				t.Errorf("%s: cites %s, which no page of docs/ defines", p, code)
			}
		}
	}
}
