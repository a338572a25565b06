/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/ownership"
)

func refISVC() *inferencev1alpha1.InferenceService {
	return &inferencev1alpha1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "chat"},
		Spec:       inferencev1alpha1.InferenceServiceSpec{Runtime: inferencev1alpha1.RuntimeLlamaCPP, ModelRef: "qwen"},
	}
}

// qwen is the Model refISVC names.
func qwen() *inferencev1alpha1.Model {
	return &inferencev1alpha1.Model{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "qwen", UID: "u"},
		Spec: inferencev1alpha1.ModelKindSpec{Source: "org/repo", Format: inferencev1alpha1.ModelFormatGGUF, Files: []string{"model.gguf"}}}
}

func kinds(p *Plan) []string {
	var out []string
	for _, o := range slices.Concat(p.Before, p.After, p.Gateway) {
		out = append(out, o.Kind)
	}
	return out
}

func TestPlanOfAMissingModelAppliesNothingThatRoutesTraffic(t *testing.T) {
	isvc := refISVC()
	isvc.Spec.Gateway = &inferencev1alpha1.GatewaySpec{ParentRefs: []inferencev1alpha1.GatewayParentReference{{Name: "gw"}}}
	p, err := PlanFor(&Observed{ISVC: isvc, ModelMissing: true}, Flags{FieldManager: ownership.DefaultFieldManager})
	if err != nil {
		t.Fatal(err)
	}
	if p.HasDeployment() || p.Blocked != ReasonModelNotFound || len(kinds(p)) != 0 {
		t.Fatalf("blocked %q, deployment %v, objects %v: want ModelNotFound and nothing", p.Blocked, p.HasDeployment(), kinds(p))
	}
	st := StatusFor(p, nil, nil, nil, nil).Status
	if st.Endpoint != nil {
		t.Fatalf("endpoint %q published for a plan that publishes no Service", *st.Endpoint)
	}
}

func TestPlanOfAModelRefUsesTheModel(t *testing.T) {
	m := qwen()
	p, err := PlanFor(&Observed{ISVC: refISVC(), Model: m}, Flags{FieldManager: ownership.DefaultFieldManager})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(p); !slices.Equal(got, []string{"PersistentVolumeClaim", "Service"}) {
		t.Fatalf("objects %v, want the Model's cache claim and the Service", got)
	}
	d, err := p.Deployment(nil, ownership.DefaultFieldManager)
	if err != nil {
		t.Fatal(err)
	}
	if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--hf-repo") {
		t.Fatalf("args %v: the Model's repository is not passed", args)
	}
}

// The pool and route of a removed spec.gateway are objects of the plan, which the reconciler
// deletes and kubectl llmkube diff shows; a spec with a gateway deletes neither.
func TestPlanWithoutSpecGatewayDeletesThePoolAndTheRoute(t *testing.T) {
	m := qwen()
	p, err := PlanFor(&Observed{ISVC: refISVC(), Model: m}, Flags{FieldManager: ownership.DefaultFieldManager})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range p.GatewayDelete {
		got = append(got, d.GVK.Kind+" "+d.Key.String())
	}
	if want := []string{"InferencePool ns/chat", "HTTPRoute ns/chat"}; !slices.Equal(got, want) {
		t.Fatalf("gateway deletions %v, want %v", got, want)
	}
	withGateway := refISVC()
	withGateway.Spec.Gateway = &inferencev1alpha1.GatewaySpec{ParentRefs: []inferencev1alpha1.GatewayParentReference{{Name: "gw"}}}
	if p, err = PlanFor(&Observed{ISVC: withGateway, Model: m}, Flags{FieldManager: ownership.DefaultFieldManager}); err != nil {
		t.Fatal(err)
	}
	if len(p.GatewayDelete) != 0 || len(p.Gateway) != 2 {
		t.Fatalf("with spec.gateway: deletions %v, objects %d", p.GatewayDelete, len(p.Gateway))
	}
}
