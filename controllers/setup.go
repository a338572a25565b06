/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
)

// Config is what the reconcilers need from the command line.
type Config struct {
	FieldManager            string
	EmitScrapeAnnotations   bool
	MaxConcurrentReconciles int
}

// Setup registers every reconciler with mgr. Tests call it too, so that the suite runs exactly
// the wiring the binary runs.
func Setup(mgr ctrl.Manager, cfg Config) error {
	applier := ownership.Applier{Client: mgr.GetClient(), FieldManager: cfg.FieldManager}
	opts := controller.Options{MaxConcurrentReconciles: cfg.MaxConcurrentReconciles}
	if err := (&inferenceservice.Reconciler{
		Client:                mgr.GetClient(),
		Applier:               applier,
		Recorder:              mgr.GetEventRecorder(cfg.FieldManager),
		EmitScrapeAnnotations: cfg.EmitScrapeAnnotations,
	}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	return (&modelrouter.Reconciler{
		Client:                mgr.GetClient(),
		Applier:               applier,
		Recorder:              mgr.GetEventRecorder(cfg.FieldManager),
		EmitScrapeAnnotations: cfg.EmitScrapeAnnotations,
	}).SetupWithManager(mgr, opts)
}
