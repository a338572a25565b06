/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
)

// OwnedEqualsDesired says whether the fields a manager owns (an apply configuration extracted
// from the live object, e.g. with appsv1ac.ExtractDeployment) hold exactly what the manager
// wants to apply now. When they do, an apply would change nothing and is not sent.
//
// Note: the comparison is against the extracted configuration, never the live object: the API
// server defaults fields nobody applied (imagePullPolicy, terminationMessagePath, ...), and other
// managers add their own, so a comparison with the live object never settles. What the comparison
// still has to smooth over is listed, rule by rule, in normalize.go.
func OwnedEqualsDesired(owned, desired any) (bool, error) {
	o, err := Normalize(owned)
	if err != nil {
		return false, fmt.Errorf("normalizing owned fields: %w", err)
	}
	d, err := Normalize(desired)
	if err != nil {
		return false, fmt.Errorf("normalizing desired fields: %w", err)
	}
	return equality.Semantic.DeepEqual(o, d), nil
}
