/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/status"
)

// Reasons of the GatewayReady condition. When a Gateway refuses the HTTPRoute or the
// InferencePool, the reason is the Gateway's own (NotAllowedByListeners, NotSupportedByParent,
// InvalidExtensionRef, ...).
const (
	ReasonGatewayAccepted = "Accepted"
	ReasonGatewayPending  = "Pending"
	ReasonCRDNotInstalled = "CRDNotInstalled"
)

// The conditions a Gateway reports per parent, on an HTTPRoute and on an InferencePool alike.
var parentConditions = []string{string(gatewayv1.RouteConditionAccepted), string(gatewayv1.RouteConditionResolvedRefs)}

// crdNotInstalled is GatewayReady when the API server does not serve the kinds spec.gateway needs.
func crdNotInstalled(missing []schema.GroupVersionKind) *metav1.Condition {
	names := make([]string, len(missing))
	for i, gvk := range missing {
		names[i] = groupKind(gvk)
	}
	return &metav1.Condition{
		Type: inferencev1alpha1.ConditionGatewayReady, Status: metav1.ConditionFalse, Reason: ReasonCRDNotInstalled,
		Message: fmt.Sprintf("the CRD of %s is not installed: install the Gateway API and Gateway API Inference Extension CRDs; the operator looks again every so often and creates the HTTPRoute and InferencePool then",
			strings.Join(names, " and ")),
	}
}

// gatewayCondition is GatewayReady as the Gateways in spec.gateway.parentRefs report it in the
// status of the HTTPRoute and of the InferencePool (nil when not created yet).
//
// Each parent must report both Accepted and ResolvedRefs, for the generation of the object it
// speaks of, on both objects:
//
//	any condition False                     -> False, the parent's reason, naming parent and object
//	else any missing, Unknown or stale      -> Unknown, Pending
//	else                                    -> True, Accepted
func gatewayCondition(isvc *inferencev1alpha1.InferenceService, route *gatewayv1.HTTPRoute, pool *inferencepoolv1.InferencePool) *metav1.Condition {
	routeName := fmt.Sprintf("HTTPRoute %s/%s", isvc.Namespace, isvc.Name)
	poolName := fmt.Sprintf("InferencePool %s/%s", isvc.Namespace, isvc.Name)
	var refused, pending *verdict
	note := func(v *verdict) {
		switch {
		case v == nil:
		case v.status == metav1.ConditionFalse && refused == nil:
			refused = v
		case v.status == metav1.ConditionUnknown && pending == nil:
			pending = v
		}
	}
	for _, ref := range isvc.Spec.Gateway.ParentRefs {
		gateway := fmt.Sprintf("Gateway %s/%s", ptr.Deref(ref.Namespace, isvc.Namespace), ref.Name)
		if ref.SectionName != nil {
			gateway += " (listener " + *ref.SectionName + ")"
		}
		var routeConds, poolConds []metav1.Condition
		var routeGen, poolGen int64
		routeFound, poolFound := false, false
		if route != nil {
			routeGen = route.Generation
			for i := range route.Status.Parents {
				if routeParentIs(route.Status.Parents[i].ParentRef, ref, isvc.Namespace) {
					routeConds, routeFound = route.Status.Parents[i].Conditions, true
					break
				}
			}
		}
		if pool != nil {
			poolGen = pool.Generation
			for i := range pool.Status.Parents {
				if poolParentIs(pool.Status.Parents[i].ParentRef, ref, isvc.Namespace) {
					poolConds, poolFound = pool.Status.Parents[i].Conditions, true
					break
				}
			}
		}
		note(judge(gateway, routeName, routeFound, routeConds, routeGen))
		note(judge(gateway, poolName, poolFound, poolConds, poolGen))
	}
	c := &metav1.Condition{Type: inferencev1alpha1.ConditionGatewayReady}
	switch {
	case refused != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, refused.reason, refused.message
	case pending != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, ReasonGatewayPending, pending.message
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonGatewayAccepted
		c.Message = fmt.Sprintf("every Gateway accepted %s and %s and resolved their references", routeName, poolName)
	}
	c.Message = status.Truncate(c.Message, status.ConditionMessageLimit)
	return c
}

// verdict is what one parent says of one object.
type verdict struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// judge reads one parent's conditions on one object (found: the parent has an entry in its
// status); nil means accepted and resolved.
func judge(gateway, object string, found bool, conds []metav1.Condition, generation int64) *verdict {
	if !found {
		return &verdict{status: metav1.ConditionUnknown, message: fmt.Sprintf("waiting for %s to report on %s", gateway, object)}
	}
	var pending *verdict
	for _, t := range parentConditions {
		c := meta.FindStatusCondition(conds, t)
		switch {
		case c == nil:
			if pending == nil {
				pending = &verdict{status: metav1.ConditionUnknown, message: fmt.Sprintf("waiting for %s to report %s on %s", gateway, t, object)}
			}
		case c.ObservedGeneration != 0 && c.ObservedGeneration < generation:
			if pending == nil {
				pending = &verdict{status: metav1.ConditionUnknown, message: fmt.Sprintf("waiting for %s to report %s on generation %d of %s (it reported on %d)", gateway, t, generation, object, c.ObservedGeneration)}
			}
		case c.Status == metav1.ConditionFalse:
			msg := fmt.Sprintf("%s refused %s: %s=False (%s)", gateway, object, t, c.Reason)
			if c.Message != "" {
				msg += ": " + c.Message
			}
			return &verdict{status: metav1.ConditionFalse, reason: c.Reason, message: msg}
		case c.Status != metav1.ConditionTrue:
			if pending == nil {
				pending = &verdict{status: metav1.ConditionUnknown, message: fmt.Sprintf("%s reports %s=%s (%s) on %s", gateway, t, c.Status, c.Reason, object)}
			}
		}
	}
	return pending
}

// routeParentIs says whether an HTTPRoute's status entry speaks of the Gateway (listener) ref
// names; fields the entry leaves out take the HTTPRoute's defaults.
func routeParentIs(p gatewayv1.ParentReference, ref inferencev1alpha1.GatewayParentReference, namespace string) bool {
	return string(ptr.Deref(p.Group, gatewayv1.GroupName)) == gatewayv1.GroupName &&
		string(ptr.Deref(p.Kind, "Gateway")) == "Gateway" &&
		string(p.Name) == ref.Name &&
		string(ptr.Deref(p.Namespace, gatewayv1.Namespace(namespace))) == ptr.Deref(ref.Namespace, namespace) &&
		string(ptr.Deref(p.SectionName, "")) == ptr.Deref(ref.SectionName, "")
}

// poolParentIs says whether an InferencePool's status entry speaks of the Gateway ref names. A
// pool's parent is a whole Gateway, never a listener.
func poolParentIs(p inferencepoolv1.ParentReference, ref inferencev1alpha1.GatewayParentReference, namespace string) bool {
	ns := string(p.Namespace)
	if ns == "" {
		ns = namespace
	}
	kind := string(p.Kind)
	if kind == "" {
		kind = "Gateway"
	}
	return string(ptr.Deref(p.Group, gatewayv1.GroupName)) == gatewayv1.GroupName && kind == "Gateway" &&
		string(p.Name) == ref.Name && ns == ptr.Deref(ref.Namespace, namespace)
}
