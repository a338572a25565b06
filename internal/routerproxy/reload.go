/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// DocumentWatcher rereads the mounted routing document and switches the proxy to it.
//
// Note: the kubelet updates a ConfigMap volume by writing the new files into a new directory and
// swapping a symlink (..data) atomically, so a read sees the old document or the new one, never
// half of one; the path's inode changes on every swap, which is why this polls the content rather
// than watching the file. A document the proxy cannot parse or serve is refused: the old one keeps
// serving, and a metric and a log line say so (the operator validates what it writes, so this is
// a proxy older than its operator, or a hand-edited ConfigMap).
type DocumentWatcher struct {
	Path     string
	Interval time.Duration
	Proxy    *Proxy
	// Applied is called after a new document was switched to (the endpoints watch follows it).
	Applied func(*routingv1.Document)
	Log     *slog.Logger

	reloads *prometheus.CounterVec
	current prometheus.Gauge
	last    []byte
	// served says last is the document the proxy serves (false: it was refused).
	served bool
	// unreadable is why the file could not be read at the last tick, empty when it could.
	unreadable string
}

// NewDocumentWatcher registers the watcher's metrics; data is the document the proxy started
// with.
func NewDocumentWatcher(path string, data []byte, interval time.Duration, p *Proxy, reg prometheus.Registerer, log *slog.Logger) *DocumentWatcher {
	w := &DocumentWatcher{
		Path: path, Interval: interval, Proxy: p, Log: log, last: data, served: true,
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmkube_router_config_reloads_total", Help: "Routing documents read after the start, by result: applied, refused (the previous one keeps serving), or unreadable (the file is missing, unreadable or empty; counted once per change of its error).",
		}, []string{"result"}),
		current: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llmkube_router_config_last_reload_successful", Help: "1 when the mounted routing document is the one the proxy serves, 0 while it refuses it or cannot read it.",
		}),
	}
	w.current.Set(1)
	// Every result from the start: an increase() or an alert sees 0, not nothing.
	for _, r := range []string{"applied", "refused", "unreadable"} {
		w.reloads.WithLabelValues(r)
	}
	reg.MustRegister(w.reloads, w.current)
	return w
}

// Run polls until ctx ends.
func (w *DocumentWatcher) Run(ctx context.Context) {
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.check()
		}
	}
}

// check reads the document once and applies it when it changed.
//
// Note: the kubelet swaps a mounted document atomically, so a file that cannot be read is not a
// swap in progress but a deleted ConfigMap key, a changed permission or a truncated file. The
// previous document keeps serving, and the proxy says so once per change of state (a log line,
// result="unreadable", the gauge at 0), not once per tick, until a good document is read.
func (w *DocumentWatcher) check() {
	data, err := os.ReadFile(w.Path)
	if err == nil && len(bytes.TrimSpace(data)) == 0 {
		err = errors.New("the file is empty")
	}
	if err != nil {
		if err.Error() != w.unreadable {
			w.unreadable = err.Error()
			w.reloads.WithLabelValues("unreadable").Inc()
			w.current.Set(0)
			w.Log.Error("routing document unreadable; the previous one keeps serving", "path", w.Path, "error", err.Error())
		}
		return
	}
	if w.unreadable != "" {
		w.unreadable = ""
		w.Log.Info("routing document readable again", "path", w.Path)
		if bytes.Equal(data, w.last) && w.served {
			w.current.Set(1)
		}
	}
	if bytes.Equal(data, w.last) {
		return
	}
	w.last = data
	doc, err := routingv1.Parse(data)
	if err == nil {
		err = w.Proxy.Reload(doc)
	}
	if err != nil {
		w.served = false
		w.reloads.WithLabelValues("refused").Inc()
		w.current.Set(0)
		w.Log.Error("routing document refused; the previous one keeps serving", "error", err.Error())
		return
	}
	w.served = true
	w.reloads.WithLabelValues("applied").Inc()
	w.current.Set(1)
	w.Log.Info("routing document applied to new requests", "backends", len(doc.Backends), "rules", len(doc.Rules))
	if w.Applied != nil {
		w.Applied(doc)
	}
}
