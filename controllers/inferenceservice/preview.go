/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

// This file lets tools that explain the operator (kubectl llmkube) compute the Deployment the
// reconciler would apply, with the reconciler's own unexported rules, instead of a copy of them.

// PreviewInputs are the Inputs the reconciler gathers for isvc when the live Deployment is live
// (nil when absent), for an operator running with fieldManager and emitScrapeAnnotations.
func PreviewInputs(isvc *inferencev1alpha1.InferenceService, live *appsv1.Deployment, fieldManager string, emitScrapeAnnotations bool) (Inputs, error) {
	r := &Reconciler{Applier: ownership.Applier{FieldManager: fieldManager}}
	replicas, _, err := r.replicas(isvc, live)
	return Inputs{
		EmitScrapeAnnotations: emitScrapeAnnotations,
		Ready:                 live != nil && live.Status.ReadyReplicas > 0,
		Replicas:              replicas,
	}, err
}

// PreviewMigrationTarget is what the reconciler hands the migration of live (see
// migrationTarget).
func PreviewMigrationTarget(isvc *inferencev1alpha1.InferenceService, in Inputs, live *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
	return migrationTarget(isvc, in, live)
}

// PreviewApply is the Deployment the reconciler applies after any migration, given migrated, the
// live Deployment as it is then (nil when absent), and desired, Deployment(isvc, in): the
// startup-protection rule applied, the rollout gate ignored (a preview shows the change the gate
// would defer).
func PreviewApply(isvc *inferencev1alpha1.InferenceService, in Inputs, desired *appsv1ac.DeploymentApplyConfiguration, migrated *appsv1.Deployment, fieldManager string) (*appsv1ac.DeploymentApplyConfiguration, error) {
	if migrated == nil {
		return desired, nil
	}
	owned, err := appsv1ac.ExtractDeployment(migrated, fieldManager)
	if err != nil {
		return nil, err
	}
	return keepStartupProtection(isvc, in, desired, owned)
}
