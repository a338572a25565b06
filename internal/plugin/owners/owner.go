/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package owners

// This file reads an object's managedFields as "who owns this path": one decoded field set per
// entry, so that a table of many keys decodes each entry once.

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/llmkube/operator/controllers/ownership"
)

// Owner is one managedFields entry that owns a field.
type Owner struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource,omitempty"`
}

// String is "manager (Operation)" or "manager (Operation/subresource)".
func (o Owner) String() string {
	op := o.Operation
	if o.Subresource != "" {
		op += "/" + o.Subresource
	}
	return o.Manager + " (" + op + ")"
}

// Join renders owners for a table cell, "-" when there are none.
func Join(owners []Owner) string {
	if len(owners) == 0 {
		return "-"
	}
	s := make([]string, len(owners))
	for i, o := range owners {
		s[i] = o.String()
	}
	return strings.Join(s, ", ")
}

type entry struct {
	owner Owner
	set   *fieldpath.Set
}

// Index answers which entries own a path.
type Index struct {
	entries []entry
}

// NewIndex decodes every entry of managedFields.
func NewIndex(managedFields []metav1.ManagedFieldsEntry) (*Index, error) {
	x := &Index{}
	for _, e := range managedFields {
		set, err := ownership.EntrySet(e) // the operator's own decoder and error policy
		if err != nil {
			return nil, err
		}
		x.entries = append(x.entries, entry{owner: Owner{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource}, set: set})
	}
	return x, nil
}

// Owners lists the entries that own p, sorted by manager, then operation.
func (x *Index) Owners(p fieldpath.Path) []Owner {
	var out []Owner
	for _, e := range x.entries {
		if e.set.Has(p) {
			out = append(out, e.owner)
		}
	}
	slices.SortFunc(out, func(a, b Owner) int {
		return strings.Compare(a.Manager+"\x00"+a.Operation+"\x00"+a.Subresource, b.Manager+"\x00"+b.Operation+"\x00"+b.Subresource)
	})
	return out
}

// Owns says whether manager's own apply (not an Update, not a subresource) owns p.
func Owns(owners []Owner, manager string) bool {
	return slices.ContainsFunc(owners, func(o Owner) bool {
		return o.Manager == manager && o.Operation == string(metav1.ManagedFieldsOperationApply) && o.Subresource == ""
	})
}

// Others are the owners other than manager's apply.
func Others(owners []Owner, manager string) []Owner {
	return slices.DeleteFunc(slices.Clone(owners), func(o Owner) bool {
		return o.Manager == manager && o.Operation == string(metav1.ManagedFieldsOperationApply) && o.Subresource == ""
	})
}

// Managers names the owners' managers, for a message.
func Managers(owners []Owner) string {
	s := make([]string, 0, len(owners))
	for _, o := range owners {
		if !slices.Contains(s, o.Manager) {
			s = append(s, o.Manager)
		}
	}
	return strings.Join(s, ", ")
}
