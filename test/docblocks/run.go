/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package docblocks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// blockEnd separates the output of one block from the next in the one shell session that runs
// them all, so an `export` in one block holds for the next, as in a reader's shell.
const blockEnd = "@@llmkube-doc-block-end@@"

// RunTimeout bounds one Run: the quick start waits up to two minutes per step.
const RunTimeout = 6 * time.Minute

// Run runs the blocks, in order, in one bash session in dir, and returns what each printed. The
// environment is this process's without KUBECONFIG (so the page's own export is what points
// kubectl at a cluster, unless env sets it), with $KUBEBUILDER_ASSETS first on PATH (where `make
// envtest-bin` puts a kubectl), and with env added. On failure the error says after which block
// it stopped and what the session printed.
func Run(dir string, blocks []Block, env ...string) ([]string, error) {
	var script strings.Builder
	for _, b := range blocks {
		script.WriteString(b.Body + "\necho " + blockEnd + "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script.String())
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	outs := strings.Split(stdout.String(), blockEnd+"\n")
	if err != nil {
		return nil, fmt.Errorf("the documented commands failed after %d of %d blocks (the next is %s): %w\nstdout:\n%s\nstderr:\n%s",
			len(outs)-1, len(blocks), blocks[min(len(outs)-1, len(blocks)-1)], err, stdout.String(), stderr.String())
	}
	return outs[:len(blocks)], nil
}
