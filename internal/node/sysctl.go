/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// kubeletSysctls are the machine-wide kernel settings the kubelet sets for itself when it starts
// (its setupKernelTunables: overcommit, panic on oops, the root key quotas). A node that is only
// visiting this machine writes the machine's values back when it stops.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

const sysctlFile = "sysctl.orig"

// saveSysctls records the machine's values in the state directory, where Cleanup finds them even
// after a crash.
func saveSysctls(stateDir string) error {
	var b strings.Builder
	for _, k := range kubeletSysctls {
		v, err := os.ReadFile(filepath.Join("/proc/sys", k))
		if err != nil {
			continue
		}
		b.WriteString(k + "=" + strings.TrimSpace(string(v)) + "\n")
	}
	return os.WriteFile(filepath.Join(stateDir, sysctlFile), []byte(b.String()), 0o600)
}

func restoreSysctls(stateDir string) error {
	data, err := os.ReadFile(filepath.Join(stateDir, sysctlFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		cur, _ := os.ReadFile(filepath.Join("/proc/sys", k))
		if strings.TrimSpace(string(cur)) != v {
			errs = append(errs, os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644))
		}
	}
	return errors.Join(errs...)
}
