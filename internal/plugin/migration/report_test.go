/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package migration

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmkube/operator/internal/plugin"
)

// A field the migration releases is told in the object's summary line, not as a table row (mostly
// defaults the API server filled in); a pod-template key is a row with the other mode's action.
func TestPrintReleasedFieldsGoToTheSummary(t *testing.T) {
	after := "x"
	p := &Plan{Owner: "isvc/up", Kind: "ConfigMap", Namespace: "ns", Name: "up",
		Outcome: Outcome{Keys: []Key{
			{Part: PartField, Key: "data.legacy.json", Value: "{}", After: &after, Action: ActionRelease},
			{Part: PartLabel, Key: "tier", Value: "gold", Action: ActionPrune},
		}, Pruned: []string{"label:tier"}},
		Alternative: Outcome{Keys: []Key{{Part: PartLabel, Key: "tier", Action: ActionKeep}}},
	}
	var out bytes.Buffer
	r := &Report{Namespace: "ns", Plans: []*Plan{p}, Blocked: []string{"ns/isvc/orphan: Model nowhere does not exist"}}
	if err := Print(&out, plugin.Table, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"# ns/isvc/orphan: Model nowhere does not exist: its objects are migrated once it exists\n",
		"releases other fields (unowned afterwards, never deleted) [data.legacy.json]",
		"prune [label:tier]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Count(text, "data.legacy.json") != 1 {
		t.Errorf("a released field is a table row too:\n%s", text)
	}
	if !strings.Contains(text, "ns/ConfigMap/up  label  tier  gold   prune   -             keep") {
		t.Errorf("no row for label tier with the other mode's action:\n%s", text)
	}
}
