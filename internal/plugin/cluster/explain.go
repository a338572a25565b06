/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package cluster

import (
	"errors"
	"fmt"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Explain turns an error of doing what on the object named (kind in what) into a message that
// says what to do.
func Explain(err error, what, name, ns string) error {
	kind := strings.TrimPrefix(strings.TrimPrefix(what, "reading "), "listing ")
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && name == "" && strings.Contains(err.Error(), "the server could not find the requested resource"):
		return fmt.Errorf("%s: the llmkube CRDs are not installed on this cluster: install the operator (helm install llmkube charts/llmkube, or kubectl apply -f config/crd/bases): %w", what, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("no %s %q in namespace %q: check the name with `kubectl get %s -n %s`, or pass -n NAMESPACE", kind, name, ns, strings.ToLower(kind)+"s", ns)
	case apierrors.IsForbidden(err):
		resource := strings.ToLower(kind) + "s"
		return fmt.Errorf("%s: no access (%s): ask your cluster admin for get and list on %s in namespace %q; check with `kubectl auth can-i list %s -n %s`",
			what, err.Error(), resource, ns, resource, ns)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the API server does not accept your credentials: log in again or check --kubeconfig and --context", what)
	case errors.As(err, &dnsErr) || errors.As(err, &opErr):
		return fmt.Errorf("%s: cannot reach the API server: %w (check --kubeconfig, --context and --server)", what, err)
	}
	return fmt.Errorf("%s %s: %w", what, name, err)
}
