/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// EntrySet decodes the fields one managedFields entry owns.
//
// Note: this is the package's one decoder, with one error policy: an entry that does not decode is
// an error naming its manager, never skipped. The API server only stores entries it could encode,
// so such an entry means a corrupt object, and guessing ownership from the others would be wrong
// (a skipped entry would hide a co-owner from the conflict report, the replicas handover and the
// migration alike).
func EntrySet(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	s := &fieldpath.Set{}
	if e.FieldsV1 == nil {
		return s, nil
	}
	if err := s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
		return nil, fmt.Errorf("decoding the managedFields entry of %s (%s): %w", e.Manager, e.Operation, err)
	}
	return s, nil
}

// OtherOwners lists the managers other than manager whose managedFields entries (on the main
// resource or its scale subresource) own path.
//
// Note: the Deployment reconciler asks this of spec.replicas: once an autoscaler (or a person
// through the scale subresource) owns it, the operator stops applying it and so never fights them.
func OtherOwners(obj metav1.Object, manager string, path fieldpath.Path) ([]string, error) {
	var out []string
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager || (e.Subresource != "" && e.Subresource != "scale") {
			continue
		}
		set, err := EntrySet(e)
		if err != nil {
			return nil, err
		}
		if set.Has(path) {
			out = append(out, e.Manager)
		}
	}
	return out, nil
}

// HasApplyEntry says whether manager has an Apply entry on obj's main resource.
func HasApplyEntry(obj metav1.Object, manager string) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return true
		}
	}
	return false
}
