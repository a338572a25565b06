/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

// Condition types and reasons shared by both kinds. A positive condition has one plain positive
// reason; a negative reason names what went wrong.
const (
	// ConditionReady is True when the workload serves traffic.
	ConditionReady = "Ready"
	// ConditionProgressing is True while a rollout is under way.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the operator could not apply the desired state; the message
	// quotes the API server.
	ConditionDegraded = "Degraded"
	// ConditionResolvedRefs is True when every reference of the object resolves.
	ConditionResolvedRefs = "ResolvedRefs"
	// ConditionRolloutDeferred is True while a pod-template change waits for idle runtimes.
	ConditionRolloutDeferred = "RolloutDeferred"
	// ConditionModelResolved is True when the Model an InferenceService names in spec.modelRef
	// exists.
	ConditionModelResolved = "ModelResolved"
	// ConditionAccepted is True when the operator saw an object's spec, which admission already
	// validated (a Model).
	ConditionAccepted = "Accepted"
	// ConditionReconciling is True while the object's desired state is not yet realized (a
	// rollout under way, a change the rollout gate holds back); absent otherwise. kstatus, and so
	// Flux's health checks and kubectl wait, read it as "in progress" (promise K1).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the desired state cannot be realized without a change by a
	// person (a refused object, a missing Model, ProgressDeadlineExceeded); absent otherwise.
	// kstatus reads it as "failed" (promise K2).
	ConditionStalled = "Stalled"
)

// Phase is a one-word summary of an object's state for `kubectl get`; conditions carry the detail.
// +kubebuilder:validation:Enum=Pending;Progressing;Ready;Degraded
type Phase string

const (
	PhasePending     Phase = "Pending"
	PhaseProgressing Phase = "Progressing"
	PhaseReady       Phase = "Ready"
	PhaseDegraded    Phase = "Degraded"
)

// ServiceType is how an endpoint is exposed.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// name is the name of the object, in the same namespace. At most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Maintainers: LabelValue is a named type so that the CRD bounds each map value; a CEL rule over
// unbounded values exceeds the API server's cost budget. This note is a separate comment group
// (blank line below), so controller-gen does not copy it into the CRD.

// LabelValue is a Kubernetes label value: at most 63 characters (alphanumerics, -, _ or .), starting and ending with an alphanumeric, or empty.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="self.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')",messageExpression="'a label value holds only letters, digits, -, _ and . (no spaces), at most 63 characters, starting and ending with a letter or digit, such as team-a or v1.2; got: ' + self"
type LabelValue string
