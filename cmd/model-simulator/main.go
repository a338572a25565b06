/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command model-simulator is a model-server simulator for tests and the local cluster only: it
// answers OpenAI-compatible requests with a fixed text and reports vLLM's metrics, and no model
// runs behind it (internal/modelsim). It takes vLLM's server flags (--model, --host, --port), so an
// InferenceService with `runtime: vllm` selects it the way a user selects any custom image.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/llmkube/operator/internal/modelsim"
)

func main() {
	var cfg modelsim.Config
	flag.StringVar(&cfg.Model, "model", "simulated-model", "The model name it answers as and lists in /v1/models (vLLM's --model).")
	host := flag.String("host", "0.0.0.0", "Address to listen on (vLLM's --host).")
	port := flag.Int("port", 8000, "Port of the API, /health and /metrics (vLLM's --port).")
	flag.StringVar(&cfg.Reply, "reply", "", "The text of every answer; a default that says it is a simulator's when empty.")
	flag.Float64Var(&cfg.TokensPerSecond, "tokens-per-second", 20, "Pace of every answer's tokens; 0 answers at once.")
	flag.IntVar(&cfg.MaxRunning, "max-num-seqs", 16, "Requests running at once; the rest wait (vLLM's --max-num-seqs).")
	flag.IntVar(&cfg.Dimensions, "embedding-dimensions", 8, "Length of every embedding vector.")
	flag.Parse()

	sim := modelsim.New(cfg)
	srv := &http.Server{
		Addr:              net.JoinHostPort(*host, strconv.Itoa(*port)),
		Handler:           sim.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		// A pod being replaced finishes the answers it is giving, as a real server drains.
		shutdown, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	slog.Info("model simulator serving (no model runs here)", "addr", srv.Addr, "model", cfg.Model, "tokensPerSecond", cfg.TokensPerSecond)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		slog.Error("serving", "err", err)
		os.Exit(1)
	}
}
