/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/llmkube/operator/test/procstat"
)

// cpuTime is the CPU a process has used so far (user plus system), from /proc/<pid>/stat; zero
// when the process is gone.
//
// Note: /proc is read while the process runs so that a window (a convergence, a round of no-op
// reconciles) can be cut out of its life; its resolution is 10 ms, far below what is measured.
func cpuTime(pid int) time.Duration {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

// controlPlanePIDs finds the kube-apiserver and etcd processes of env by their command lines
// (envtest keeps its processes to itself): the API server serving on env's secure port, etcd on
// env's client URL.
func controlPlanePIDs(env *envtest.Environment) (apiserver, etcd int, err error) {
	cp := env.ControlPlane
	apiArg := "--secure-port=" + cp.APIServer.SecureServing.Port
	etcdHost := ""
	if cp.Etcd != nil && cp.Etcd.URL != nil {
		etcdHost = cp.Etcd.URL.Host
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(data) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		switch filepath.Base(args[0]) {
		case "kube-apiserver":
			for _, a := range args[1:] {
				if a == apiArg {
					apiserver = pid
				}
			}
		case "etcd":
			for _, a := range args[1:] {
				if etcdHost != "" && strings.HasPrefix(a, "--listen-client-urls") && strings.Contains(a, etcdHost) {
					etcd = pid
				}
			}
		}
	}
	if apiserver == 0 || etcd == 0 {
		return apiserver, etcd, fmt.Errorf("control plane processes not found (kube-apiserver %d, etcd %d)", apiserver, etcd)
	}
	return apiserver, etcd, nil
}

// cpuMeter reads the CPU of the operator's process and of the control plane's two, for a window.
type cpuMeter struct {
	apiserver, etcd int
}

// CPU is the CPU time spent in a window, per process.
type CPU struct {
	Operator  jsonDuration `json:"operator"`
	APIServer jsonDuration `json:"apiserver"`
	Etcd      jsonDuration `json:"etcd"`
	// Bench is the benchmark's own process: its creators, its observer's watch and, for the
	// floors, the client that writes what the operator would.
	Bench jsonDuration `json:"bench"`
	// Machine is the CPU every process of the machine used (its busy time, all cores): with the
	// window's length it says whether the cores were the limit.
	Machine jsonDuration `json:"machine"`
}

// Cores is how many cores the machine kept busy over a window of that length.
func (c CPU) Cores(window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return float64(c.Machine) / float64(window)
}

// Total is the CPU of the processes the benchmark runs: control plane, operator and itself.
func (c CPU) Total() time.Duration {
	return time.Duration(c.Operator + c.APIServer + c.Etcd + c.Bench)
}

// plus is c and d added up, process by process.
func (c CPU) plus(d CPU) CPU {
	return CPU{Operator: c.Operator + d.Operator, APIServer: c.APIServer + d.APIServer, Etcd: c.Etcd + d.Etcd,
		Bench: c.Bench + d.Bench, Machine: c.Machine + d.Machine}
}

// per is c divided by n (CPU per object).
func (c CPU) per(n int) CPU {
	d := jsonDuration(n)
	return CPU{Operator: c.Operator / d, APIServer: c.APIServer / d, Etcd: c.Etcd / d, Bench: c.Bench / d, Machine: c.Machine / d}
}

type cpuMark struct{ op, api, etcd, bench, machine time.Duration }

func (m cpuMeter) mark(operatorPID int) cpuMark {
	return cpuMark{op: cpuTime(operatorPID), api: cpuTime(m.apiserver), etcd: cpuTime(m.etcd), bench: cpuTime(os.Getpid()), machine: procstat.Busy(true)}
}

func (start cpuMark) to(end cpuMark) CPU {
	return CPU{Operator: jsonDuration(end.op - start.op), APIServer: jsonDuration(end.api - start.api), Etcd: jsonDuration(end.etcd - start.etcd),
		Bench: jsonDuration(end.bench - start.bench), Machine: jsonDuration(end.machine - start.machine)}
}
