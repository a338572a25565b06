/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package controllers

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/managedfields"

	gatewayac "sigs.k8s.io/gateway-api/applyconfiguration"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/model"
	"github.com/llmkube/operator/controllers/modelrouter"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/rollout"
	"github.com/llmkube/operator/controllers/status"
)

// Config is what the reconcilers need from the command line.
type Config struct {
	FieldManager            string
	EmitScrapeAnnotations   bool
	MaxConcurrentReconciles int
	// LegacyFieldManagers are the records-based operator's field managers (Update entries):
	// ownership.DefaultLegacyFieldManagers when nil, none when empty but not nil
	// (`--legacy-field-managers=`).
	LegacyFieldManagers []string
	// AdoptLegacyOwnership also takes over template keys the legacy entry owns but no record lists.
	AdoptLegacyOwnership bool
	// RouterProxyImage is the router-proxy image when a ModelRouter's spec.proxy.image is not set;
	// modelrouter.DefaultImage() when empty.
	RouterProxyImage string
	// ProbeTransport carries the rollout gate's requests to runtime pods' /metrics; Go's default
	// transport when nil. Tests use it to reach stand-in pods.
	ProbeTransport http.RoundTripper
	// GatewayCRDRecheck is how often a missing Gateway API CRD is looked for again while an
	// InferenceService asks for a gateway; inferenceservice.DefaultCRDRecheck when zero.
	GatewayCRDRecheck time.Duration
	// DriftRepair is how often a converged object is reconciled again to repair drift no event
	// carries; retry.DefaultResync when zero, never when negative.
	DriftRepair time.Duration
	// Metrics is where the operator's own metrics are registered (RegisterMetrics);
	// controller-runtime's registry, the one its metrics endpoint serves, when nil.
	Metrics prometheus.Registerer
	// Namespaces are the namespaces the manager's cache watches (all when empty): the cache of
	// the names the operator's caches leave out (ownership.ForeignNames) watches the same.
	Namespaces []string
}

// Setup registers every reconciler with mgr. Tests call it too, so that the suite runs exactly
// the wiring the binary runs.
func Setup(mgr ctrl.Manager, cfg Config) error {
	if cfg.Metrics == nil {
		cfg.Metrics = crmetrics.Registry
	}
	if err := RegisterMetrics(cfg.Metrics, mgr.GetCache()); err != nil {
		return err
	}
	recorder := status.LimitedRecorder{Recorder: mgr.GetEventRecorder(cfg.FieldManager)}
	opts := controller.Options{MaxConcurrentReconciles: cfg.MaxConcurrentReconciles}
	legacy := ownership.Legacy{FieldManagers: cfg.LegacyFieldManagers, Adopt: cfg.AdoptLegacyOwnership}
	if legacy.FieldManagers == nil {
		legacy.FieldManagers = ownership.DefaultLegacyFieldManagers
	}
	scheme := mgr.GetScheme()
	foreign, err := ownership.NewForeignNames(mgr.GetConfig(), scheme, mgr.GetRESTMapper(), cfg.Namespaces)
	if err != nil {
		return err
	}
	if err := mgr.Add(foreign); err != nil {
		return err
	}
	applier := ownership.Applier{Foreign: foreign, Client: mgr.GetClient(), FieldManager: cfg.FieldManager, Recorder: recorder,
		// The Inference Extension's generated schema has no InferencePool (its parser does not
		// know the kind), so the pool is typed by a schema deduced from the object, last.
		Types:   ownership.NewTypeConverter(scheme, gatewayac.NewTypeConverter(scheme), managedfields.NewDeducedTypeConverter()),
		Written: &ownership.OwnWrites{FieldManager: cfg.FieldManager},
		Reader:  mgr.GetAPIReader(),
		Migrator: ownership.Migrator{
			Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: recorder,
			FieldManager: cfg.FieldManager, Legacy: legacy,
		}}
	prober := rollout.NewProber(mgr.GetAPIReader())
	if cfg.ProbeTransport != nil {
		prober.HTTP.Transport = cfg.ProbeTransport
	}
	if err := inferenceservice.IndexModelRef(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := (&inferenceservice.Reconciler{
		Client:                mgr.GetClient(),
		Applier:               applier,
		Recorder:              recorder,
		Gate:                  &rollout.Gate{Prober: prober},
		EmitScrapeAnnotations: cfg.EmitScrapeAnnotations,
		CRDRecheck:            cfg.GatewayCRDRecheck,
		DriftRepair:           cfg.DriftRepair,
	}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&model.Reconciler{Client: mgr.GetClient(), Applier: applier}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	return (&modelrouter.Reconciler{
		Client:                mgr.GetClient(),
		Applier:               applier,
		Recorder:              recorder,
		EmitScrapeAnnotations: cfg.EmitScrapeAnnotations,
		Image:                 cfg.RouterProxyImage,
		DriftRepair:           cfg.DriftRepair,
	}).SetupWithManager(mgr, opts)
}
