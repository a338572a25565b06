/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// newNamespace creates a namespace for one spec and deletes it afterwards.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	Expect(k8sClient.Create(suiteCtx, ns)).To(Succeed())
	DeferCleanup(func() { _ = k8sClient.Delete(suiteCtx, ns) })
	return ns.Name
}

// fresh returns a new empty object of obj's type: decoding into a reused one would keep map keys
// the server no longer has.
func fresh[T client.Object](obj T) T {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}

// edit changes the object named as a person would (read, change, Update), retrying on conflicts.
func edit[T client.Object](ns, name string, kind T, change func(T), opts ...client.UpdateOption) {
	Eventually(func() error {
		obj := fresh(kind)
		if err := k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
			return err
		}
		change(obj)
		return k8sClient.Update(suiteCtx, obj, opts...)
	}).Should(Succeed())
}

// touched changes nothing an operator reads but makes it reconcile the object.
func touched(obj client.Object) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a["test.llmkube.dev/touched"] = time.Now().Format(time.RFC3339Nano)
	obj.SetAnnotations(a)
}

// eventually reads the object named until match holds, and returns it.
func eventually[T client.Object](ns, name string, kind T, match func(g Gomega, obj T)) T {
	var out T
	Eventually(func(g Gomega) {
		obj := fresh(kind)
		g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, obj)).To(Succeed())
		match(g, obj)
		out = obj
	}).WithTimeout(20 * time.Second).Should(Succeed())
	return out
}
