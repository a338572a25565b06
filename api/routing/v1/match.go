/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1

import "strings"

// Match is what a model name routes to.
type Match struct {
	// Rule is the index of the matching rule, or -1 for the default route.
	Rule int
	// Pattern is the rule's entry that matched (an exact name or a prefix ending in *); empty for
	// the default route. It is bounded by the document, so metrics can use it as a label.
	Pattern string
	// Backends are the backend names to try in order: the rule's backend, then its fallbacks.
	Backends []string
}

// Route finds where model goes: the first rule, in order, with an entry equal to model or a
// trailing-* entry whose prefix model starts with; then the default route. ok is false when
// nothing matches.
func (d *Document) Route(model string) (m Match, ok bool) {
	for i := range d.Rules {
		r := &d.Rules[i]
		for _, p := range r.Models {
			if MatchModel(p, model) {
				return Match{Rule: i, Pattern: p, Backends: append([]string{r.Backend}, r.Fallbacks...)}, true
			}
		}
	}
	if d.DefaultRoute != "" {
		return Match{Rule: -1, Backends: []string{d.DefaultRoute}}, true
	}
	return Match{}, false
}

// MatchModel reports whether pattern (an exact name, or a prefix followed by *) matches model.
// Only a trailing * is special; "*" alone matches every model.
func MatchModel(pattern, model string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(model, prefix)
	}
	return pattern == model
}
