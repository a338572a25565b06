/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/operator/controllers/ownership"
)

func svc(name string) Object {
	return Of(corev1ac.Service(name, "ns"), newService, corev1ac.ExtractService)
}

// A chain a <- b <- c, and d needing nothing: a refusal of a holds b and c (withdrawn, as the
// cause is a refusal), a failure of a holds them without withdrawing, and d is sent either way.
func TestRunHoldsWhatNeedsAFailedObject(t *testing.T) {
	a, d := svc("a"), svc("d")
	b := svc("b").Needing(a.Ref())
	c := svc("c").Needing(b.Ref())
	notControlled := ownership.Fail("Service", a.Key, ownership.StepOwnership, &ownership.NotControlled{Want: "InferenceService x"})
	for _, tc := range []struct {
		name      string
		fail      error
		withdrawn []string
		refused   bool
	}{
		{name: "refused", fail: notControlled, withdrawn: []string{"b", "c"}, refused: true},
		{name: "failed", fail: errors.New("timeout"), withdrawn: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent, withdrawn []string
			send := func(o Object, err error) Step {
				return Step{Object: o, Send: func(context.Context) error { sent = append(sent, o.Key.Name); return err }}
			}
			steps := []Step{send(a, tc.fail), send(b, nil), send(c, nil), send(d, nil)}
			failures := Run(context.Background(), ownership.Applier{}, nil, nil, steps, func(_ context.Context, o Object) error {
				withdrawn = append(withdrawn, o.Key.Name)
				return nil
			})
			if !slices.Equal(sent, []string{"a", "d"}) {
				t.Errorf("sent %v, want a (failed) and d (needs nothing)", sent)
			}
			if !slices.Equal(withdrawn, tc.withdrawn) {
				t.Errorf("withdrawn %v, want %v", withdrawn, tc.withdrawn)
			}
			if len(failures) != 3 || !IsHeld(failures[1]) || !IsHeld(failures[2]) {
				t.Fatalf("failures %v, want a's and b, c held", failures)
			}
			if got := ownership.AllRefused(failures); got != tc.refused {
				t.Errorf("AllRefused = %v, want %v: a hold is refused exactly when its cause is", got, tc.refused)
			}
		})
	}
}

func TestRunHoldsOnARefusalThePlanDecided(t *testing.T) {
	a := svc("a")
	b := svc("b").Needing(a.Ref())
	sentB := false
	failures := Run(context.Background(), ownership.Applier{}, nil, nil, []Step{
		{Object: a, Refused: &ownership.NotControlled{Want: "x"}},
		{Object: b, Send: func(context.Context) error { sentB = true; return nil }},
	}, nil)
	if sentB || len(failures) != 2 {
		t.Fatalf("b sent %v, failures %v", sentB, failures)
	}
}

func TestDependentsAreTransitive(t *testing.T) {
	a, d := svc("a"), svc("d")
	b := svc("b").Needing(a.Ref())
	c := svc("c").Needing(b.Ref(), d.Ref())
	got := Dependents([]Object{a, b, c, d}, a.Ref())
	want := []Ref{b.Ref(), c.Ref()}
	if !slices.Equal(got, want) {
		t.Fatalf("Dependents(a) = %v, want %v", got, want)
	}
	if got := Dependents([]Object{a, b, c, d}, Ref{Kind: "Service", Key: client.ObjectKey{Namespace: "ns", Name: "d"}}); !slices.Equal(got, []Ref{c.Ref()}) {
		t.Fatalf("Dependents(d) = %v", got)
	}
}
