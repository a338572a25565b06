/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"path/filepath"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	. "github.com/onsi/gomega"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// argoHealthScript is the Argo CD health check docs/health.md tells users to install.
var argoHealthScript = filepath.Join(testenv.RepoRoot(), "docs", "argocd", "health.lua")

// argoHealth runs the documented Argo CD health check on the object of kind named, as read from
// the API server, the way Argo CD does: the object as the global obj, the check's table as the
// answer. It returns the health status (Progressing, Healthy, Degraded) and message.
func argoHealth(kind, ns, name string) (string, string) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(inferencev1alpha1.GroupVersion.String())
	u.SetKind(kind)
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, u)).To(Succeed())
	L := lua.NewState(lua.Options{SkipOpenLibs: false})
	defer L.Close()
	L.SetGlobal("obj", toLua(L, u.Object))
	Expect(L.DoFile(argoHealthScript)).To(Succeed())
	hs, ok := L.Get(-1).(*lua.LTable)
	Expect(ok).To(BeTrue(), "the health check returns a table")
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

// argoFor is the Argo CD health that matches kstatus' verdict: the check reads the same
// conditions in the same order.
func argoFor(s kstatus.Status) string {
	switch s {
	case kstatus.CurrentStatus:
		return "Healthy"
	case kstatus.FailedStatus:
		return "Degraded"
	}
	return "Progressing"
}

// toLua converts a decoded JSON value into the Lua value Argo CD hands a health check: objects
// become tables keyed by name, arrays tables indexed from 1.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range v {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	}
	panic(fmt.Sprintf("toLua: unexpected %T", v))
}

// argoStatus is argoHealth's status alone.
func argoStatus(kind, ns, name string) string {
	s, _ := argoHealth(kind, ns, name)
	return s
}
