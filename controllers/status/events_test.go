/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTruncate(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("é", 700), strings.Repeat("x", 5000)} {
		got := Truncate(s, NoteLimit)
		if len(got) > NoteLimit || !utf8.ValidString(got) {
			t.Fatalf("Truncate(%d bytes) = %d bytes, valid=%v", len(s), len(got), utf8.ValidString(got))
		}
		if len(s) <= NoteLimit && got != s {
			t.Fatalf("a short string changed")
		}
		if len(s) > NoteLimit && (!strings.HasSuffix(got, "...") || !strings.HasPrefix(s, strings.TrimSuffix(got, "..."))) {
			t.Fatalf("a long string is not its own prefix and a mark")
		}
	}
}

func TestNewRejection(t *testing.T) {
	degraded := []metav1.Condition{{Type: "Degraded", Status: metav1.ConditionTrue, ObservedGeneration: 2, Message: "bad"}}
	for name, tc := range map[string]struct {
		conds []metav1.Condition
		gen   int64
		msg   string
		want  bool
	}{
		"first rejection":        {nil, 2, "bad", true},
		"same rejection again":   {degraded, 2, "bad", false},
		"another message":        {degraded, 2, "worse", true},
		"a new generation":       {degraded, 3, "bad", true},
		"was healthy":            {[]metav1.Condition{{Type: "Degraded", Status: metav1.ConditionFalse, ObservedGeneration: 2}}, 2, "bad", true},
		"a message over the cap": {[]metav1.Condition{{Type: "Degraded", Status: metav1.ConditionTrue, ObservedGeneration: 2, Message: Truncate(strings.Repeat("x", 40000), ConditionMessageLimit)}}, 2, strings.Repeat("x", 40000), false},
	} {
		if got := NewRejection(tc.conds, "Degraded", tc.gen, tc.msg); got != tc.want {
			t.Errorf("%s: NewRejection = %v, want %v", name, got, tc.want)
		}
	}
}
