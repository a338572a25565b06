/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/ownership"
)

// Config is what the reconcilers need from the command line.
type Config struct {
	FieldManager            string
	EmitScrapeAnnotations   bool
	MaxConcurrentReconciles int
	// LegacyFieldManagers are the field managers of earlier operator versions; the migration of
	// legacy ownership hands what they own to FieldManager. Not used yet.
	LegacyFieldManagers []string
	// AdoptLegacyOwnership turns the records-based operator's ownership records into managedFields
	// of FieldManager, once per object. Not used yet.
	AdoptLegacyOwnership bool
}

// Setup registers every reconciler with mgr. Tests call it too, so that the suite runs exactly
// the wiring the binary runs.
func Setup(mgr ctrl.Manager, cfg Config) error {
	recorder := mgr.GetEventRecorder(cfg.FieldManager)
	applier := ownership.Applier{Client: mgr.GetClient(), FieldManager: cfg.FieldManager, Recorder: recorder}
	opts := controller.Options{MaxConcurrentReconciles: cfg.MaxConcurrentReconciles}
	return (&inferenceservice.Reconciler{
		Client:                mgr.GetClient(),
		Applier:               applier,
		Recorder:              recorder,
		EmitScrapeAnnotations: cfg.EmitScrapeAnnotations,
	}).SetupWithManager(mgr, opts)
}
