/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	inferencepoolv1ac "sigs.k8s.io/gateway-api-inference-extension/client-go/applyconfiguration/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/runtimes"
)

// HeaderModelName is the header a Gateway's body-based routing sets from the request's "model",
// and the one the HTTPRoute matches when spec.gateway.modelName is set.
const HeaderModelName = "X-Gateway-Model-Name"

// The kinds spec.gateway writes.
var (
	InferencePoolKind = inferencepoolv1.SchemeGroupVersion.WithKind("InferencePool")
	HTTPRouteKind     = gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute")
)

// InferencePool is the pool the operator wants for isvc, or nil without spec.gateway: it selects
// exactly the Deployment's selector labels on the runtime's port.
//
// Note: appProtocol, and the endpoint picker's group and kind, are left to their CRD defaults
// (http, the core group, Service): the operator has no opinion on them, so it does not own them.
func InferencePool(isvc *inferencev1alpha1.InferenceService) *inferencepoolv1ac.InferencePoolApplyConfiguration {
	gw := isvc.Spec.Gateway
	if gw == nil {
		return nil
	}
	selector := map[inferencepoolv1.LabelKey]inferencepoolv1.LabelValue{}
	for k, v := range SelectorLabels(isvc.Name) {
		selector[inferencepoolv1.LabelKey(k)] = inferencepoolv1.LabelValue(v)
	}
	spec := inferencepoolv1ac.InferencePoolSpec().
		WithSelector(inferencepoolv1ac.LabelSelector().WithMatchLabels(selector)).
		WithTargetPorts(inferencepoolv1ac.Port().WithNumber(inferencepoolv1.PortNumber(runtimes.ResolvedPort(&isvc.Spec))))
	if epp := gw.EndpointPickerRef; epp != nil {
		mode := epp.FailureMode
		if mode == "" {
			mode = inferencev1alpha1.EndpointPickerFailClose
		}
		spec.WithEndpointPickerRef(inferencepoolv1ac.EndpointPickerRef().
			WithName(inferencepoolv1.ObjectName(epp.Name)).
			WithPort(inferencepoolv1ac.Port().WithNumber(inferencepoolv1.PortNumber(epp.Port.Number))).
			WithFailureMode(inferencepoolv1.EndpointPickerFailureMode(mode)))
	}
	return inferencepoolv1ac.InferencePool(isvc.Name, isvc.Namespace).
		WithLabels(operatorLabels(isvc)).
		WithOwnerReferences(ownerReference(isvc)).
		WithSpec(spec)
}

// HTTPRoute is the route the operator wants for isvc, or nil without spec.gateway: the
// parentRefs and hostnames of the spec, and one rule that sends requests (those naming
// spec.gateway.modelName, when set) to the InferencePool.
//
// Note: parentRefs, rules, matches and backendRefs are atomic lists in the HTTPRoute CRD, so
// the operator owns each whole, defaults included; it states the values the CRD would default
// (group and kind of a parent, the path match, the header match type, the weight), or what it
// owns would never equal what it wants and every reconcile would write.
func HTTPRoute(isvc *inferencev1alpha1.InferenceService) *gatewayv1ac.HTTPRouteApplyConfiguration {
	gw := isvc.Spec.Gateway
	if gw == nil {
		return nil
	}
	spec := gatewayv1ac.HTTPRouteSpec()
	for _, p := range gw.ParentRefs {
		ref := gatewayv1ac.ParentReference().
			WithGroup(gatewayv1.GroupName).
			WithKind("Gateway").
			WithName(gatewayv1.ObjectName(p.Name))
		if p.Namespace != nil {
			ref.WithNamespace(gatewayv1.Namespace(*p.Namespace))
		}
		if p.SectionName != nil {
			ref.WithSectionName(gatewayv1.SectionName(*p.SectionName))
		}
		spec.WithParentRefs(ref)
	}
	for _, h := range gw.Hostnames {
		spec.WithHostnames(gatewayv1.Hostname(h))
	}
	match := gatewayv1ac.HTTPRouteMatch().
		WithPath(gatewayv1ac.HTTPPathMatch().WithType(gatewayv1.PathMatchPathPrefix).WithValue("/"))
	if gw.ModelName != nil {
		match.WithHeaders(gatewayv1ac.HTTPHeaderMatch().
			WithType(gatewayv1.HeaderMatchExact).
			WithName(HeaderModelName).
			WithValue(*gw.ModelName))
	}
	spec.WithRules(gatewayv1ac.HTTPRouteRule().
		WithMatches(match).
		WithBackendRefs(gatewayv1ac.HTTPBackendRef().
			WithGroup(gatewayv1.Group(InferencePoolKind.Group)).
			WithKind(gatewayv1.Kind(InferencePoolKind.Kind)).
			WithName(gatewayv1.ObjectName(isvc.Name)).
			WithWeight(1)))
	return gatewayv1ac.HTTPRoute(isvc.Name, isvc.Namespace).
		WithLabels(operatorLabels(isvc)).
		WithOwnerReferences(ownerReference(isvc)).
		WithSpec(spec)
}
