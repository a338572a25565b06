/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package ownership

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// DecodeAppliesOnce makes every server-side apply sent through cfg carry fieldValidation=Ignore,
// unless it names a field validation of its own.
//
// Why: without it the API server validates fields as Warn, and for an apply that means decoding
// the YAML body twice: once to apply it, once more, strictly, only to find unknown or duplicate
// fields. The operator's bodies are marshalled from typed apply configurations, so they hold
// neither; the second decode finds nothing and was about 30% of the API server's CPU for each
// apply (docs/benchmarks/README.md, "What one apply costs the API server", measures it).
// controller-runtime's Apply has no field validation option, hence a transport.
//
// What is given up: a field the API server does not know (an operator built against newer
// Kubernetes types than the cluster serves) is dropped without the warning Warn would log; Warn
// drops it too.
func DecodeAppliesOnce(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return decodeOnce{next: rt} })
}

type decodeOnce struct{ next http.RoundTripper }

func (t decodeOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPatch || req.Header.Get("Content-Type") != string(types.ApplyPatchType) ||
		req.URL.Query().Has("fieldValidation") {
		return t.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it is given.
	out := req.Clone(req.Context())
	q := out.URL.Query()
	q.Set("fieldValidation", metav1.FieldValidationIgnore)
	out.URL.RawQuery = q.Encode()
	return t.next.RoundTrip(out)
}
