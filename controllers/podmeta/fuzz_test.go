/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package podmeta

import (
	"strings"
	"testing"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// pairs decodes "k=v;k=v" into a map; the fuzzer mutates the string freely.
func pairs(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// FuzzMerge checks the precedence rules for any maps: operator labels win, user annotations win,
// pinned annotations win over both, nothing is invented or dropped, and empty is nil.
func FuzzMerge(f *testing.F) {
	f.Add("app=foo;inference.llmkube.dev/runtime=vllm", "team=a;app=mine", "karpenter.sh/do-not-disrupt=true", "karpenter.sh/do-not-disrupt=false;x=1", "h=1")
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, opLabels, userLabels, opAnn, userAnn, pinnedAnn string) {
		ol, ul := pairs(opLabels), pairs(userLabels)
		user := map[string]inferencev1alpha1.LabelValue{}
		for k, v := range ul {
			user[k] = inferencev1alpha1.LabelValue(v)
		}
		labels := Labels(ol, user)
		if (labels == nil) != (len(ol)+len(ul) == 0) {
			t.Fatalf("Labels nil=%v for %d operator and %d user keys", labels == nil, len(ol), len(ul))
		}
		for k, v := range labels {
			if ov, ok := ol[k]; ok {
				if v != ov {
					t.Fatalf("label %q = %q, operator wants %q and must win", k, v, ov)
				}
			} else if uv, ok := ul[k]; !ok || uv != v {
				t.Fatalf("label %q = %q is neither the operator's nor the user's", k, v)
			}
		}
		for k := range ul {
			if _, ok := labels[k]; !ok {
				t.Fatalf("user label %q dropped", k)
			}
		}

		oa, ua, pa := pairs(opAnn), pairs(userAnn), pairs(pinnedAnn)
		ann := Annotations(oa, ua)
		pinned := AnnotationsPinned(oa, pa, ua)
		if len(ann) != len(union(oa, ua)) || len(pinned) != len(union(union(oa, ua), pa)) {
			t.Fatalf("annotations invent or drop keys: %v %v", ann, pinned)
		}
		for k, v := range ann {
			want, ok := ua[k]
			if !ok {
				want = oa[k]
			}
			if v != want {
				t.Fatalf("annotation %q = %q, want %q (user wins)", k, v, want)
			}
		}
		for k, v := range pinned {
			want, ok := pa[k]
			if !ok {
				want = ann[k]
			}
			if v != want {
				t.Fatalf("pinned annotation %q = %q, want %q (pinned wins)", k, v, want)
			}
		}
		if (ann == nil) != (len(oa)+len(ua) == 0) {
			t.Fatalf("Annotations nil=%v", ann == nil)
		}
	})
}

func union(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
