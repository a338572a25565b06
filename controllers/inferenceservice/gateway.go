/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	inferencepoolv1ac "sigs.k8s.io/gateway-api-inference-extension/client-go/applyconfiguration/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
	"github.com/llmkube/operator/controllers/plan"
	"github.com/llmkube/operator/controllers/status"
)

// +kubebuilder:rbac:groups=inference.networking.k8s.io,resources=inferencepools,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=inference.networking.k8s.io,resources=inferencepools/status,verbs=get
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes/status,verbs=get

// gatewayOutcome is what the gateway part of a reconcile found: the GatewayReady condition (nil:
// none, so the condition leaves the status) and when to look again for missing CRDs (0: no need).
type gatewayOutcome struct {
	condition    *metav1.Condition
	requeueAfter time.Duration
}

// setupGateway prepares the InferencePool and HTTPRoute watches of controller c, which start once
// their CRDs are served (see optionalKind).
func (r *Reconciler) setupGateway(mgr ctrl.Manager, c controller.Controller) {
	recheck := r.CRDRecheck
	if recheck <= 0 {
		recheck = DefaultCRDRecheck
	}
	owner := &inferencev1alpha1.InferenceService{}
	pool := source.Kind(mgr.GetCache(), &inferencepoolv1.InferencePool{},
		handler.TypedEnqueueRequestForOwner[*inferencepoolv1.InferencePool](mgr.GetScheme(), mgr.GetRESTMapper(), owner, handler.OnlyControllerOwner()),
		ownership.TypedPredicateStartedLate[*inferencepoolv1.InferencePool](r.Applier.Written))
	route := source.Kind(mgr.GetCache(), &gatewayv1.HTTPRoute{},
		handler.TypedEnqueueRequestForOwner[*gatewayv1.HTTPRoute](mgr.GetScheme(), mgr.GetRESTMapper(), owner, handler.OnlyControllerOwner()),
		ownership.TypedPredicateStartedLate[*gatewayv1.HTTPRoute](r.Applier.Written))
	r.gateway = &gatewayKinds{
		mapper: mgr.GetRESTMapper(),
		pool:   newOptionalKind(InferencePoolKind, c, pool, recheck),
		route:  newOptionalKind(HTTPRouteKind, c, route, recheck),
	}
	if dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig()); err == nil {
		r.gateway.pool.lookup, r.gateway.route.lookup = discoveryLookup(dc), discoveryLookup(dc)
	}
}

// reconcileGateway applies the InferencePool and the HTTPRoute spec.gateway asks for, or deletes
// them when it is gone, and says what the Gateways report.
//
// Note: without the CRDs this is no error (nothing to retry, nothing to log): GatewayReady says
// which CRD is missing, the rest of the InferenceService converges, and the reconcile comes back
// after the recheck period to look again.
//
// The pool and the route are sent through run, after the workload: each is held when what it
// needs was not applied, and run holds their failures (the returned error is another one).
func (r *Reconciler) reconcileGateway(ctx context.Context, isvc *inferencev1alpha1.InferenceService, p *Plan, run *plan.Runner) (gatewayOutcome, error) {
	if r.gateway == nil {
		return gatewayOutcome{}, nil
	}
	keep := gatewayOutcome{condition: meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)}
	if len(p.GatewayDelete) > 0 {
		if err := r.removeGateway(ctx, isvc, p.GatewayDelete); err != nil {
			// GatewayReady is the record that a deletion is owed: it stays until the deletion is done.
			return keep, err
		}
		return gatewayOutcome{}, nil
	}
	missing, err := r.gateway.missing()
	if err != nil {
		return gatewayOutcome{condition: meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)}, err
	}
	if len(missing) > 0 {
		return gatewayOutcome{condition: crdNotInstalled(missing), requeueAfter: r.gateway.pool.recheck}, nil
	}
	if len(p.Gateway) == 0 {
		// A blocked plan publishes no route: GatewayReady says why, and what exists is left alone.
		return gatewayOutcome{condition: &metav1.Condition{Type: inferencev1alpha1.ConditionGatewayReady,
			Status: metav1.ConditionFalse, Reason: p.Blocked, Message: p.BlockedMessage}}, nil
	}
	// The live pool and route are read into these by the apply's own read (before the write): a
	// Gateway's report is in their status.
	key := client.ObjectKeyFromObject(isvc)
	pool := &inferencepoolv1.InferencePool{}
	route := &gatewayv1.HTTPRoute{}
	poolErr := run.Do(ctx, plan.Step{Object: p.Gateway[0], Send: func(ctx context.Context) error {
		return ownership.Sync(ctx, r.Applier, r.Client, isvc, key, pool, extractInferencePool, p.Gateway[0].Desired)
	}})
	routeErr := run.Do(ctx, plan.Step{Object: p.Gateway[1], Send: func(ctx context.Context) error {
		return ownership.Sync(ctx, r.Applier, r.Client, isvc, key, route, gatewayv1ac.ExtractHTTPRoute, p.Gateway[1].Desired)
	}})
	if err := errors.Join(poolErr, routeErr); err != nil {
		// A kind whose CRD was deleted after its watch started is one that was never there. An
		// apply never answers 404 for its object (it creates it), so a 404 is the kind going
		// away, even while discovery still lists it for a moment: no failure, ask again shortly.
		var requeue time.Duration
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			run.Retract(poolErr, routeErr)
			if r.gateway.gone() {
				if missing, lerr := r.gateway.missing(); lerr == nil && len(missing) > 0 {
					return gatewayOutcome{condition: crdNotInstalled(missing), requeueAfter: r.gateway.pool.recheck}, nil
				}
			}
			requeue = r.gateway.pool.recheck
		}
		return gatewayOutcome{condition: &metav1.Condition{Type: inferencev1alpha1.ConditionGatewayReady,
			Status: metav1.ConditionFalse, Reason: status.Reason(err), Message: status.Truncate(err.Error(), status.ConditionMessageLimit)},
			requeueAfter: requeue}, nil
	}
	// A pool or route read as absent was created just now: no Gateway has spoken of it yet.
	if pool.UID == "" {
		pool = nil
	}
	if route.UID == "" {
		route = nil
	}
	return gatewayOutcome{condition: gatewayCondition(isvc, route, pool)}, nil
}

// removeGateway sends the plan's gateway deletions (the InferencePool and the HTTPRoute of an
// InferenceService whose spec.gateway is gone), all in the same reconcile, each if the
// InferenceService controls it.
//
// Note: a kind this process already watches costs a cache read, nothing more. A kind it has not
// looked up yet (after a restart) is looked up only for an InferenceService that has a
// GatewayReady condition, the trace spec.gateway leaves until its objects are gone: every other
// InferenceService costs no discovery request and starts no watch of HTTPRoutes.
func (r *Reconciler) removeGateway(ctx context.Context, isvc *inferencev1alpha1.InferenceService, deletions []plan.Deletion) error {
	hadGateway := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionGatewayReady) != nil
	var errs []error
	for _, d := range deletions {
		k := r.gateway.kind(d.GVK)
		if k == nil {
			errs = append(errs, fmt.Errorf("deleting %s %s: not a gateway kind", d.GVK.Kind, d.Key))
			continue
		}
		served := k.Known()
		if !served && hadGateway {
			var err error
			if served, err = k.Served(r.gateway.mapper, false); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if served {
			errs = append(errs, r.deleteControlled(ctx, isvc, d, hadGateway))
		}
	}
	return errors.Join(errs...)
}

// extractInferencePool is what fieldManager owns of pool, as ExtractHTTPRoute is for routes.
//
// Note: the Gateway API Inference Extension ships apply configurations without an Extract
// function (they are generated without the OpenAPI schema), so this extracts against the
// deduced schema: maps field by field, lists whole. That is exact for every field the operator
// applies: labels and matchLabels are maps, targetPorts is an atomic list in the CRD, and
// ownerReferences hold only the operator's own entry.
func extractInferencePool(pool *inferencepoolv1.InferencePool, fieldManager string) (*inferencepoolv1ac.InferencePoolApplyConfiguration, error) {
	b := &inferencepoolv1ac.InferencePoolApplyConfiguration{}
	if err := managedfields.ExtractInto(pool, typed.DeducedParseableType, fieldManager, b, ""); err != nil {
		return nil, err
	}
	b.WithName(pool.Name).WithNamespace(pool.Namespace).
		WithKind(InferencePoolKind.Kind).WithAPIVersion(InferencePoolKind.GroupVersion().String())
	return b, nil
}
