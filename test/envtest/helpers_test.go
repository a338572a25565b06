/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newNamespace creates a namespace for one spec and deletes it afterwards.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	Expect(k8sClient.Create(suiteCtx, ns)).To(Succeed())
	DeferCleanup(func() { _ = k8sClient.Delete(suiteCtx, ns) })
	return ns.Name
}
