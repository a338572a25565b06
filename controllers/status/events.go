/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Limits the API server puts on what the operator reports.
const (
	// NoteLimit is the longest note an events.k8s.io Event may have; a longer one is rejected and
	// the Event is lost.
	NoteLimit = 1024
	// ConditionMessageLimit is the longest message of a metav1.Condition; a longer one makes the
	// whole status apply fail.
	ConditionMessageLimit = 32768
)

// Truncate shortens s to at most limit bytes, on a rune boundary, marking the cut with "...".
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const mark = "..."
	cut := limit - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// LimitedRecorder records through Recorder with every note cut to NoteLimit, so that a long API
// server message (many rejected fields, many conflicts) still gives an Event that quotes its
// beginning instead of none.
type LimitedRecorder struct {
	Recorder events.EventRecorder
}

// Eventf implements events.EventRecorder.
func (r LimitedRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.Recorder.Eventf(regarding, related, eventtype, reason, action, "%s", Truncate(fmt.Sprintf(note, args...), NoteLimit))
}

// NewRejection says whether a rejection with message msg is news for an object whose status has
// conds at generation: not Degraded yet, Degraded for another reason or message, or for an
// earlier generation. Only news gets a Warning Event; a reconcile that meets the same rejection
// again (its own status write, an unrelated watch event) stays silent.
func NewRejection(conds []metav1.Condition, conditionType string, generation int64, msg string) bool {
	c := meta.FindStatusCondition(conds, conditionType)
	return c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != generation ||
		c.Message != Truncate(msg, ConditionMessageLimit)
}
