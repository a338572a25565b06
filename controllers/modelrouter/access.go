/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// The proxy's identity: each router's proxy runs as a ServiceAccount of its own, bound by a Role
// to exactly what it reads, the EndpointSlices of its namespace (to choose among an
// InferenceService's pods). All three are named Name(router), owned by the router and removed
// with it.

// EndpointSliceVerbs are the verbs the proxy's Role grants on endpointslices.
//
// Note: the API server lets the operator create a Role only with permissions the operator holds
// itself (RBAC escalation prevention), so the operator's own ClusterRole has these verbs on
// endpointslices too (the marker in reconciler.go).
var EndpointSliceVerbs = []string{"get", "list", "watch"}

// ServiceAccount is the proxy pods' identity.
func ServiceAccount(router *inferencev1alpha1.ModelRouter) *corev1ac.ServiceAccountApplyConfiguration {
	return corev1ac.ServiceAccount(Name(router), router.Namespace).
		WithLabels(SelectorLabels(router.Name)).
		WithOwnerReferences(ownerReference(router))
}

// Role lets the proxy read the EndpointSlices of the router's namespace and nothing else.
//
// Note: list and watch cannot be narrowed to some objects by name (resourceNames do not apply to
// a list or a watch with a label selector), so the Role is the namespace's endpointslices; an
// EndpointSlice holds pod addresses and ports, nothing secret.
func Role(router *inferencev1alpha1.ModelRouter) *rbacv1ac.RoleApplyConfiguration {
	return rbacv1ac.Role(Name(router), router.Namespace).
		WithLabels(SelectorLabels(router.Name)).
		WithOwnerReferences(ownerReference(router)).
		WithRules(rbacv1ac.PolicyRule().
			WithAPIGroups(discoveryv1.GroupName).
			WithResources("endpointslices").
			WithVerbs(EndpointSliceVerbs...))
}

// RoleBinding binds Role to ServiceAccount.
func RoleBinding(router *inferencev1alpha1.ModelRouter) *rbacv1ac.RoleBindingApplyConfiguration {
	return rbacv1ac.RoleBinding(Name(router), router.Namespace).
		WithLabels(SelectorLabels(router.Name)).
		WithOwnerReferences(ownerReference(router)).
		WithRoleRef(rbacv1ac.RoleRef().
			WithAPIGroup("rbac.authorization.k8s.io").
			WithKind("Role").
			WithName(Name(router))).
		WithSubjects(rbacv1ac.Subject().
			WithKind("ServiceAccount").
			WithName(Name(router)).
			WithNamespace(router.Namespace))
}
