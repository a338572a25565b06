/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DB is the size of etcd's database at the end of a phase: how much the phase grew the store
// every later request of a shared control plane pays for (which is why Fair gives each phase
// its own).
type DB struct {
	// Total is the file's size (it only grows until a defragmentation); InUse the part of it
	// that holds live revisions.
	Total uint64 `json:"total"`
	InUse uint64 `json:"inUse,omitempty"`
	// Source names the metric read.
	Source string `json:"source"`
}

// dbSize reads etcd's own gauges from its client URL's /metrics (envtest's etcd serves them
// there, over plain HTTP), and falls back to the API server's view of the same file
// (apiserver_storage_size_bytes, or the older apiserver_storage_db_total_size_in_bytes), which
// the API server refreshes only every so often.
func (b *bench) dbSize(ctx context.Context) (DB, error) {
	var etcdErr error
	if e := b.env.ControlPlane.Etcd; e != nil && e.URL != nil {
		data, err := get(ctx, e.URL.String()+"/metrics")
		if err == nil {
			total, okT := metricSum(data, "etcd_mvcc_db_total_size_in_bytes")
			inUse, _ := metricSum(data, "etcd_mvcc_db_total_size_in_use_in_bytes")
			if okT {
				return DB{Total: uint64(total), InUse: uint64(inUse), Source: "etcd_mvcc_db_total_size_in_bytes"}, nil
			}
		}
		etcdErr = err
	}
	data, err := b.apiReqs.rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return DB{}, fmt.Errorf("etcd metrics: %v; API server metrics: %w", etcdErr, err)
	}
	for _, name := range []string{"apiserver_storage_size_bytes", "apiserver_storage_db_total_size_in_bytes"} {
		if v, ok := metricSum(data, name); ok && v > 0 {
			return DB{Total: uint64(v), Source: name}, nil
		}
	}
	return DB{}, fmt.Errorf("no database size metric (etcd: %v)", etcdErr)
}

func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// metricSum sums every series of a metric in Prometheus' text format; ok says it was there.
func metricSum(data []byte, name string) (sum float64, ok bool) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	// On a line it cannot parse, the parser still returns the families read before it.
	families, _ := parser.TextToMetricFamilies(bytes.NewReader(data))
	f := families[name]
	for _, m := range f.GetMetric() {
		sum += m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
	}
	return sum, len(f.GetMetric()) > 0
}
