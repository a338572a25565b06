/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package docblocks reads the fenced code blocks of the repository's Markdown, with the marker
// that says whether a test runs a shell block (`<!-- run: ID -->`) or why none can
// (`<!-- not run: why -->`), on the line before the fence. The docs check (test/docs) holds every
// shell block to one of the two; a suite that runs blocks (test/devcluster runs "quickstart") takes
// them from here, so what it runs is what the page shows.
package docblocks

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Block is one fenced block of a Markdown file.
type Block struct {
	File string
	// Line is the line of the opening fence, from 1.
	Line int
	// Info is the fence's info string (`sh`, `text`, ...), empty when the fence has none.
	Info string
	// Run is the ID of `<!-- run: ID -->` before the fence; NotRun the reason of
	// `<!-- not run: why -->`. At most one is set.
	Run, NotRun string
	// Body is the block's text, without the fences.
	Body string
	// Output is the body of a `text` block that directly follows this one (only blank lines
	// between): what the page says the commands print.
	Output *string

	prevOutput int // index of the block this one is the output of, while parsing; -1 for none
}

// Shell says whether the block holds commands a reader would type.
func (b Block) Shell() bool {
	switch b.Info {
	case "sh", "bash", "shell", "console", "zsh":
		return true
	}
	return false
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

var marker = regexp.MustCompile(`^<!--\s*(run|not run):\s*(.*?)\s*-->$`)

// Parse reads the fenced blocks of a Markdown file.
func Parse(path string) ([]Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var (
		blocks   []Block
		cur      *Block
		body     []string
		lastText string // the last non-blank line outside a block
		gapOnly  bool   // only blank lines since the last block closed
		fence    string
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if trimmed == fence {
				cur.Body = strings.Join(body, "\n")
				blocks = append(blocks, *cur)
				cur, body, gapOnly, lastText = nil, nil, true, ""
				continue
			}
			body = append(body, line)
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			fence = trimmed[:strings.LastIndex(trimmed, "`")+1]
			cur = &Block{File: path, Line: n, Info: strings.TrimSpace(strings.TrimPrefix(trimmed, fence))}
			if m := marker.FindStringSubmatch(lastText); m != nil {
				if m[1] == "run" {
					cur.Run = m[2]
				} else {
					cur.NotRun = m[2]
				}
			}
			if gapOnly && cur.Info == "text" && len(blocks) > 0 {
				cur.prevOutput = len(blocks) - 1
			} else {
				cur.prevOutput = -1
			}
			continue
		}
		if trimmed != "" {
			lastText, gapOnly = trimmed, false
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a fence that is never closed", path, cur.Line)
	}
	for i := range blocks {
		if p := blocks[i].prevOutput; p >= 0 {
			out := blocks[i].Body
			blocks[p].Output = &out
		}
	}
	return blocks, nil
}

// Runnable are the blocks of path marked `<!-- run: id -->`, in page order.
func Runnable(path, id string) ([]Block, error) {
	all, err := Parse(path)
	if err != nil {
		return nil, err
	}
	var out []Block
	for _, b := range all {
		if b.Run == id {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no block marked <!-- run: %s -->", path, id)
	}
	return out, nil
}
