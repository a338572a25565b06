/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// OtherOwners lists the managers other than manager whose managedFields entries (on the main
// resource or its scale subresource) own path.
//
// Note: the Deployment reconciler asks this of spec.replicas: once an autoscaler (or a person
// through the scale subresource) owns it, the operator stops applying it and so never fights them.
func OtherOwners(obj metav1.Object, manager string, path fieldpath.Path) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager || e.FieldsV1 == nil || (e.Subresource != "" && e.Subresource != "scale") {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			continue
		}
		if set.Has(path) {
			out = append(out, e.Manager)
		}
	}
	return out
}
