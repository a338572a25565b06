/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package migration

import "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

// templatePath is the path of a pod-template label or annotation (field is labels or annotations).
func templatePath(field, key string) fieldpath.Path {
	return fieldpath.MakePathOrDie("spec", "template", "metadata", field, key)
}
