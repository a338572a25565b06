/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
)

func desiredOwnedBy() *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service("svc", "ns").WithOwnerReferences(metav1ac.OwnerReference().
		WithAPIVersion("inference.llmkube.dev/v1alpha1").WithKind("InferenceService").WithName("chat").WithUID("u1").WithController(true)).
		WithOwnerReferences(metav1ac.OwnerReference().WithKind("Other").WithName("x").WithUID("ignored"))
}

func TestCheckControlled(t *testing.T) {
	desired := desiredOwnedBy()
	live := func(refs ...metav1.OwnerReference) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns", OwnerReferences: refs}}
	}
	for name, tc := range map[string]struct {
		live *corev1.Service
		want string // "" for controlled
	}{
		"controlled by the expected owner": {live(metav1.OwnerReference{Kind: "InferenceService", Name: "chat", UID: "u1", Controller: ptr.To(true)}), ""},
		"no owner at all":                  {live(), "has no controller"},
		"an owner that is not controller":  {live(metav1.OwnerReference{Kind: "InferenceService", Name: "chat", UID: "u1"}), "has no controller"},
		"same name, another UID (recreated)": {live(metav1.OwnerReference{Kind: "InferenceService", Name: "chat", UID: "u0", Controller: ptr.To(true)}),
			"is controlled by InferenceService chat"},
		"a second owner": {live(metav1.OwnerReference{Kind: "ModelRouter", Name: "chat", UID: "r1", Controller: ptr.To(true)}),
			"InferenceService chat does not control it (it is controlled by ModelRouter chat)"},
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckControlled(tc.live, desired)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want controlled, got %v", err)
			case tc.want != "" && (err == nil || !IsNotControlled(err) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want NotControlled containing %q, got %v", tc.want, err)
			}
			if tc.want != "" && !Refused(Fail("Service", KeyOf(desired), StepOwnership, err)) {
				t.Fatal("a NotControlled refusal must wait on the refused backoff")
			}
		})
	}
}

func TestPinUIDAndMarkManaged(t *testing.T) {
	desired := desiredOwnedBy()
	pinUID(desired, "live-uid")
	MarkManaged(desired)
	if desired.UID == nil || *desired.UID != "live-uid" {
		t.Fatalf("uid %v, want live-uid", desired.UID)
	}
	if desired.Labels[LabelManagedBy] != ManagedBy {
		t.Fatalf("labels %v", desired.Labels)
	}
	if ExpectedController(desired) == nil || *ExpectedController(desired).UID != "u1" {
		t.Fatal("the controller reference is the one with controller=true")
	}
}
