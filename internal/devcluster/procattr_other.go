//go:build !linux

/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster

import "syscall"

// dieWithParent has no portable equivalent outside Linux: Stop ends the components.
func dieWithParent() *syscall.SysProcAttr { return nil }
