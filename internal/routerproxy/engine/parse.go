/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	"github.com/llmkube/operator/internal/routerproxy/balance"
)

// Parse reads the load m names from a metrics page in Prometheus text format: each gauge is the
// sum of its series (an engine may label them by model or rank).
//
// Note: the page is streamed, and only the lines of the names m asks for are kept and parsed. A
// vLLM page is mostly histograms (hundreds of bucket lines): skipping them before expfmt makes a
// read cost a scan of the bytes, not a parse of the page, and hold a 4 KiB buffer and the few lines
// kept, not the page (BenchmarkParse).
func Parse(page io.Reader, m routingv1.EngineMetrics) (balance.EngineLoad, error) {
	want := map[string]bool{}
	for _, n := range []string{m.Waiting, m.Running, m.KVCache} {
		if n != "" {
			want[n] = true
		}
	}
	var kept bytes.Buffer
	br := bufio.NewReaderSize(page, 4096)
	for {
		line, err := br.ReadSlice('\n')
		keep := want[string(metricName(line))] // no allocation: the compiler looks up []byte keys in place
		for err == bufio.ErrBufferFull {       // a line longer than the buffer: decided by its start
			if keep {
				kept.Write(line)
			}
			line, err = br.ReadSlice('\n')
		}
		if keep {
			kept.Write(line)
			if err == io.EOF {
				kept.WriteByte('\n')
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return balance.EngineLoad{}, err
		}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&kept)
	if err != nil {
		return balance.EngineLoad{}, fmt.Errorf("metrics page: %w", err)
	}
	var l balance.EngineLoad
	var found bool
	if l.Waiting, found = sum(fams[m.Waiting]); !found && m.Waiting != "" {
		return l, fmt.Errorf("metrics page has no %s", m.Waiting)
	}
	if l.Running, found = sum(fams[m.Running]); !found && m.Running != "" {
		return l, fmt.Errorf("metrics page has no %s", m.Running)
	}
	l.KVCache, l.HasKV = sum(fams[m.KVCache])
	return l, nil
}

// metricName is the name a sample line or a # TYPE / # HELP line is about (empty for others).
func metricName(line []byte) []byte {
	if rest, ok := bytes.CutPrefix(line, []byte("# TYPE ")); ok {
		line = rest
	} else if rest, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
		line = rest
	} else if len(line) > 0 && line[0] == '#' {
		return nil
	}
	end := bytes.IndexAny(line, "{ \t\n")
	if end < 0 {
		end = len(line)
	}
	return line[:end]
}

// sum is the sum of f's series, and whether f has any.
func sum(f *dto.MetricFamily) (float64, bool) {
	if f == nil || len(f.Metric) == 0 {
		return 0, false
	}
	var s float64
	for _, m := range f.Metric {
		switch {
		case m.Gauge != nil:
			s += m.Gauge.GetValue()
		case m.Untyped != nil:
			s += m.Untyped.GetValue()
		case m.Counter != nil:
			s += m.Counter.GetValue()
		}
	}
	return s, true
}
