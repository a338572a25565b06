/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server runs a Proxy on its listener and the metrics on theirs, and shuts down gracefully.
type Server struct {
	Proxy         *Proxy
	Listen        string
	MetricsListen string
	Gatherer      prometheus.Gatherer
	// ReadHeaderTimeout bounds how long a client may take to send its headers.
	ReadHeaderTimeout time.Duration
	// ShutdownDelay is how long readiness fails, while requests are still served, before the
	// listener closes: the time endpoints need to stop sending new requests here.
	ShutdownDelay time.Duration
	// DrainTimeout is how long in-flight requests and streams may take to finish after that.
	DrainTimeout time.Duration
	Log          *slog.Logger
}

// Run serves until ctx ends (SIGTERM), then: readiness fails, ShutdownDelay passes, the listener
// closes, in-flight requests finish within DrainTimeout, and whatever is left is cut off.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return err
	}
	mln, err := net.Listen("tcp", s.MetricsListen)
	if err != nil {
		_ = ln.Close()
		return err
	}
	errLog := slog.NewLogLogger(s.Log.Handler(), slog.LevelWarn)
	srv := &http.Server{Handler: s.Proxy, ReadHeaderTimeout: s.ReadHeaderTimeout, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 1 << 20, ErrorLog: errLog}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.Gatherer, promhttp.HandlerOpts{}))
	msrv := &http.Server{Handler: mux, ReadHeaderTimeout: s.ReadHeaderTimeout, ErrorLog: errLog}

	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go s.Proxy.Run(runCtx)
	served := make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()
	go func() { served <- msrv.Serve(mln) }()
	s.Proxy.SetReady(true)
	s.Log.Info("serving", "listen", ln.Addr().String(), "metricsListen", mln.Addr().String())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.Proxy.SetReady(false)
	s.Log.Info("shutting down: readiness fails, still serving", "delay", s.ShutdownDelay.String())
	time.Sleep(s.ShutdownDelay)
	s.Log.Info("draining in-flight requests", "timeout", s.DrainTimeout.String())
	dctx, cancel := context.WithTimeout(context.Background(), s.DrainTimeout)
	defer cancel()
	err = srv.Shutdown(dctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.Log.Warn("drain timeout: cutting off the requests left")
		_ = srv.Close()
	}
	_ = msrv.Close()
	s.Log.Info("stopped")
	return nil
}
