/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiProfileChunk is the length of one CPU profile the API server is asked for. A profile's
// length is fixed when it is asked for, and a phase's length is what is measured, so a phase is
// profiled in consecutive chunks merged at its end; the last chunk runs to its end after the
// phase's, on an API server that has gone quiet, so the phase's last seconds are in it.
var apiProfileChunk = 10 * time.Second

// apiServerProfile records the API server's CPU over a phase, from its /debug/pprof/profile
// (kube-apiserver serves it by default, to system:masters): what the API server spends its
// cores on, phase beside phase, where the phase's CPU per object says only how much.
type apiServerProfile struct {
	last   atomic.Bool // stop was called: the chunk under way is the last
	done   chan struct{}
	chunks []*profile.Profile
	err    error
}

// startAPIServerProfile starts profiling the API server cfg talks to, as cfg's user.
func startAPIServerProfile(ctx context.Context, cfg *rest.Config) (*apiServerProfile, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	p := &apiServerProfile{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for !p.last.Load() {
			data, err := cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
				Param("seconds", strconv.Itoa(int(apiProfileChunk.Seconds()))).DoRaw(ctx)
			if err != nil {
				p.err = err
				return
			}
			prof, err := profile.Parse(bytes.NewReader(data))
			if err != nil {
				p.err = err
				return
			}
			p.chunks = append(p.chunks, prof)
		}
	}()
	return p, nil
}

// stop ends the profile once the chunk under way is done and writes the chunks, merged, to path.
func (p *apiServerProfile) stop(path string) error {
	p.last.Store(true)
	<-p.done
	if p.err != nil {
		return p.err
	}
	merged, err := profile.Merge(p.chunks)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := merged.Write(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// apiServerBinary is the kube-apiserver the control plane runs, for pprof's symbols.
func apiServerBinary() string {
	return filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-apiserver")
}
