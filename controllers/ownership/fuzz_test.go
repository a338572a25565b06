/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// FuzzParseRecord: every key is a valid qualified name, every non-blank entry is either a key or
// invalid (in order), and the keys round-trip.
func FuzzParseRecord(f *testing.F) {
	f.Add("app,example.com/team,tier")
	f.Add(" a , ,bad key,Bad_Prefix/x,,")
	f.Fuzz(func(t *testing.T, record string) {
		keys, invalid := ParseRecord(record)
		var entries []string
		for _, e := range strings.Split(record, ",") {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, e)
			}
		}
		if len(keys)+len(invalid) != len(entries) {
			t.Fatalf("%d keys + %d invalid != %d entries", len(keys), len(invalid), len(entries))
		}
		ki, ii := 0, 0
		for _, e := range entries {
			switch {
			case ki < len(keys) && keys[ki] == e:
				ki++
			case ii < len(invalid) && invalid[ii] == e:
				ii++
			default:
				t.Fatalf("entry %q lost or out of order", e)
			}
		}
		for _, k := range keys {
			if errs := validation.IsQualifiedName(k); len(errs) > 0 || strings.ContainsAny(k, ", ") {
				t.Fatalf("key %q is not a qualified name: %v", k, errs)
			}
		}
		again, bad := ParseRecord(strings.Join(keys, ","))
		if !slices.Equal(again, keys) || len(bad) > 0 {
			t.Fatalf("keys do not round-trip: %q -> %q %q", keys, again, bad)
		}
	})
}

// planKeys is the small key alphabet the Plan fuzzer draws from, so that live, desired, records
// and managedFields overlap often; the fuzzer's own strings join it through extra.
var planKeys = []string{"team", "tier", "example.com/owner", "app", "karpenter.sh/do-not-disrupt", "gitops/tracked", "x"}

const (
	fzOurs   = "llmkube-operator"
	fzLegacy = "manager"
)

var fuzzManagers = []struct {
	name string
	op   metav1.ManagedFieldsOperationType
}{{fzOurs, metav1.ManagedFieldsOperationApply}, {fzLegacy, metav1.ManagedFieldsOperationUpdate}, {"argocd-controller", metav1.ManagedFieldsOperationUpdate}, {"sidecar", metav1.ManagedFieldsOperationApply}}

// FuzzLegacyPlan builds random live Deployments (template keys owned by random managers through
// structured-merge-diff field sets, random records, sometimes a garbage fieldsV1) and random
// desired configurations, and checks that Plan never panics, that our manager's new entry is a
// valid field set, that it never gains a key that is neither already ours, nor desired, nor
// recorded (nor, with Adopt, the legacy entry's), nor a field live does not have, that other
// managers' entries stay as they were, and that legacy entries go.
func FuzzLegacyPlan(f *testing.F) {
	f.Add(uint64(0x0123456789abcdef), uint64(0xfedcba9876543210), "team,tier", "example.com/owner", "extra", false, []byte(nil))
	f.Add(uint64(0xffffffffffffffff), uint64(1), "bad key,x", ",,", "", true, []byte(`{"f:spec":{`))
	f.Fuzz(func(t *testing.T, layout, desiredBits uint64, recLabels, recAnnotations, extra string, adopt bool, garbage []byte) {
		keys := planKeys
		if extra != "" {
			keys = append(slices.Clone(planKeys), extra)
		}
		live := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", ResourceVersion: "7", Annotations: map[string]string{}},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}, Annotations: map[string]string{}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
				},
			},
		}
		if recLabels != "" {
			live.Annotations[RecordLabels] = recLabels
		}
		if recAnnotations != "" {
			live.Annotations[RecordAnnotations] = recAnnotations
		}
		sets := make([]*fieldpath.Set, len(fuzzManagers))
		for i := range sets {
			sets[i] = &fieldpath.Set{}
		}
		bits := layout
		next := func(n uint64) uint64 { v := bits % n; bits /= n; return v }
		for _, k := range keys {
			for _, parent := range []fieldpath.Path{templateLabels, templateAnnotations} {
				if next(2) == 0 {
					continue // not on live
				}
				if parent.String() == templateLabels.String() {
					live.Spec.Template.Labels[k] = "v"
				} else {
					live.Spec.Template.Annotations[k] = "v"
				}
				// 0: nobody owns it (possible after a manager left); else one manager.
				if m := next(uint64(len(fuzzManagers) + 1)); m > 0 {
					sets[m-1].Insert(append(parent.Copy(), fieldpath.PathElement{FieldName: &k}))
				}
			}
		}
		sets[0].Insert(fieldpath.MakePathOrDie("spec", "selector"))
		for i, m := range fuzzManagers {
			raw, err := sets[i].ToJSON()
			if err != nil {
				t.Fatal(err)
			}
			if i == 3 && len(garbage) > 0 {
				raw = garbage
			}
			live.ManagedFields = append(live.ManagedFields, metav1.ManagedFieldsEntry{
				Manager: m.name, Operation: m.op, APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw},
			})
		}

		desiredLabels, desiredAnn := map[string]string{"app": "d"}, map[string]string{}
		for _, k := range keys {
			if desiredBits&1 == 1 {
				desiredLabels[k] = "v"
			}
			if desiredBits&2 == 2 {
				desiredAnn[k] = "w"
			}
			desiredBits >>= 2
		}
		tmpl := corev1ac.PodTemplateSpec().WithLabels(desiredLabels).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage("i")))
		if len(desiredAnn) > 0 {
			tmpl.WithAnnotations(desiredAnn)
		}
		desired := appsv1ac.Deployment("d", "ns").WithSpec(appsv1ac.DeploymentSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "d"})).WithTemplate(tmpl))

		legacy := Legacy{FieldManagers: []string{fzLegacy}, Adopt: adopt}
		plan, err := legacy.Plan(live, fzOurs, desired)
		if err != nil {
			if len(garbage) > 0 {
				return // a garbage entry may be refused; it must not panic
			}
			t.Fatalf("Plan: %v", err)
		}

		var ops []struct {
			Op    string          `json:"op"`
			Path  string          `json:"path"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(plan.Patch, &ops); err != nil {
			t.Fatalf("patch: %v", err)
		}
		var entries []metav1.ManagedFieldsEntry
		for _, o := range ops {
			if o.Path == "/metadata/managedFields" {
				if err := json.Unmarshal(o.Value, &entries); err != nil {
					t.Fatalf("entries: %v", err)
				}
			}
		}
		recorded := func(record, k string) bool {
			ks, _ := ParseRecord(record)
			return slices.Contains(ks, k)
		}
		var sawOurs bool
		for _, e := range entries {
			switch {
			case e.Manager == fzLegacy:
				t.Fatalf("the legacy entry survived")
			case e.Manager != fzOurs:
				orig := live.ManagedFields[slices.IndexFunc(live.ManagedFields, func(o metav1.ManagedFieldsEntry) bool { return o.Manager == e.Manager })]
				// Compared as JSON: raw bytes may be CBOR (0xf6 is CBOR's null), which the patch
				// carries as the same fields in JSON.
				was, _ := json.Marshal(orig.FieldsV1)
				now, _ := json.Marshal(e.FieldsV1)
				if string(was) != string(now) || orig.Operation != e.Operation {
					t.Fatalf("entry of %s changed", e.Manager)
				}
				continue
			}
			sawOurs = true
			set, err := EntrySet(e)
			if err != nil {
				t.Fatalf("our new entry is not a field set: %v", err)
			}
			if set.Has(fieldpath.MakePathOrDie("metadata", "annotations", RecordLabels)) {
				t.Fatalf("we own a record annotation")
			}
			set.Iterate(func(p fieldpath.Path) {
				for pi, parent := range []fieldpath.Path{templateLabels, templateAnnotations} {
					if len(p) != len(parent)+1 || !p[:len(parent)].Equals(parent) || p[len(parent)].FieldName == nil {
						continue
					}
					k := *p[len(parent)].FieldName
					liveMap, desiredMap, record := live.Spec.Template.Labels, desiredLabels, recLabels
					if pi == 1 {
						liveMap, desiredMap, record = live.Spec.Template.Annotations, desiredAnn, recAnnotations
					}
					_, onLive := liveMap[k]
					_, isDesired := desiredMap[k]
					wasOurs := sets[0].Has(p)
					legacyOwned := sets[1].Has(p)
					if !wasOurs && !onLive {
						t.Fatalf("%s: taken but not on live", p)
					}
					if !wasOurs && !isDesired && !recorded(record, k) && !(adopt && legacyOwned) {
						t.Fatalf("%s: given to %s though neither ours, desired, recorded nor adopted (records %q %q, adopt=%v)", p, fzOurs, recLabels, recAnnotations, adopt)
					}
				}
			})
		}
		if !sawOurs {
			t.Fatalf("no entry for %s", fzOurs)
		}
	})
}
