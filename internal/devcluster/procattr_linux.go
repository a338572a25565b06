/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster

import "syscall"

// dieWithParent makes the kernel stop a component when the operator process ends in any way (a
// panic, SIGKILL), so that no controller-manager or KWOK outlives the API server it talked to.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
