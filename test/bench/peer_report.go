/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// peerFigures are one phase's figures per converged pair, as the report's tables give them.
type peerFigures struct {
	converged                    time.Duration
	requests, writes, notFound   float64
	apiserver, etcd, operatorCPU time.Duration
	steady                       int
	after                        time.Duration
	afterRequests, afterWrites   int
	restart                      time.Duration
	restartWrites, restartReqs   int
}

func figuresOf(p PeerPhase, n int) peerFigures {
	nf := 0
	for _, v := range p.Converge.NotFound {
		nf += v
	}
	per := func(d jsonDuration) time.Duration { return time.Duration(d) / time.Duration(n) }
	return peerFigures{
		converged: time.Duration(p.Converged),
		requests:  float64(p.Converge.Total()) / float64(n), writes: float64(p.Converge.Writes()) / float64(n),
		notFound:  float64(nf) / float64(n),
		apiserver: per(p.Converge.CPU.APIServer), etcd: per(p.Converge.CPU.Etcd), operatorCPU: per(p.Converge.CPU.Operator),
		steady: p.Steady.Total(),
		after:  time.Duration(p.After.Took), afterRequests: p.After.Total(), afterWrites: p.After.Writes(),
		restart: time.Duration(p.Restart.Took), restartWrites: p.Restart.Writes(), restartReqs: p.Restart.Total(),
	}
}

// PeerMarkdown renders a peer run: per N and repeat both operators, then the ratios, the
// requests by verb and resource, and where the API server's CPU went.
func PeerMarkdown(r *PeerResult) string {
	var b strings.Builder
	cmd := r.Command
	if cmd == "" {
		cmd = "make bench-peer"
	}
	fmt.Fprintf(&b, "Command: `%s`\n\nMachine: %s; load average (1, 5, 15 min) at start → end: %s. This operator: %s --cache-transform=%s; LLMKube v0.9.19 at its defaults. %d appliers; steady window %s. Requests are the operator's user's, from the API server's audit log.\n\n",
		cmd, r.Machine, r.Load, r.Options.Settings, r.Options.CacheTransform, r.Options.Workers, r.Options.Steady)
	b.WriteString("| N | repeat | operator | load | converged | requests per pair | writes per pair | 404 answers per pair | API server CPU per pair | etcd CPU per pair | operator CPU per pair | after converged: writes for, requests, writes | requests in steady window | restart: quiet after | restart: requests, writes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			f := figuresOf(p, run.N)
			fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %.2f | %.2f | %.2f | %s | %s | %s | %s, %d, %d | %d | %s | %d, %d |\n",
				run.N, run.Repeat, p.Name, p.Load, fmtDur(f.converged), f.requests, f.writes, f.notFound,
				fmtDur(f.apiserver), fmtDur(f.etcd), fmtDur(f.operatorCPU), fmtDur(f.after), f.afterRequests, f.afterWrites,
				f.steady, fmtDur(f.restart), f.restartReqs, f.restartWrites)
		}
	}
	b.WriteString("\nRatio this operator / LLMKube's (per N, the mean of its repeats' phases):\n\n")
	b.WriteString("| N | converged | requests per pair | writes per pair | API server CPU per pair | etcd CPU per pair | operator CPU per pair | steady requests | restart writes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range peerNs(r) {
		op, lk := meanFigures(r, n, PeerOperator), meanFigures(r, n, PeerLLMKube)
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %d / %d | %d / %d |\n", n,
			fratio(float64(op.converged), float64(lk.converged)), fratio(op.requests, lk.requests), fratio(op.writes, lk.writes),
			fratio(float64(op.apiserver), float64(lk.apiserver)), fratio(float64(op.etcd), float64(lk.etcd)),
			fratio(float64(op.operatorCPU), float64(lk.operatorCPU)), op.steady, lk.steady, op.restartWrites, lk.restartWrites)
	}
	b.WriteString("\nRequests while converging, per pair, by verb and resource (in brackets: of them answered 404 Not Found):\n\n")
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			fmt.Fprintf(&b, "- N=%d repeat %d %s: %s\n", run.N, run.Repeat, p.Name, perPair(p.Converge, run.N))
		}
	}
	b.WriteString("\nAfter converged, steady window and restart, by verb and resource (totals):\n\n")
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			fmt.Fprintf(&b, "- N=%d repeat %d %s: after converged %s; steady %s; restart %s\n", run.N, run.Repeat, p.Name,
				fmtMap(p.After.Requests), fmtMap(p.Steady.Requests), fmtMap(p.Restart.Requests))
		}
	}
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			if p.APIServerProfileTop == "" {
				continue
			}
			fmt.Fprintf(&b, "\nWhere the API server's CPU went while %s converged N=%d (repeat %d, `go tool pprof -top -cum` of %s, first lines):\n\n```text\n%s```\n",
				p.Name, run.N, run.Repeat, filepath.Base(p.APIServerProfile), headLines(p.APIServerProfileTop, 40))
		}
	}
	return b.String()
}

// perPair is a window's requests divided by n, largest first, with their 404 answers.
func perPair(w PeerWindow, n int) string {
	keys := make([]string, 0, len(w.Requests))
	for k := range w.Requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if w.Requests[keys[i]] != w.Requests[keys[j]] {
			return w.Requests[keys[i]] > w.Requests[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		s := fmt.Sprintf("%s %.2f", k, float64(w.Requests[k])/float64(n))
		if nf := w.NotFound[k]; nf > 0 {
			s += fmt.Sprintf(" (%.2f)", float64(nf)/float64(n))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func peerNs(r *PeerResult) []int {
	var out []int
	for _, run := range r.Runs {
		if len(out) == 0 || out[len(out)-1] != run.N {
			out = append(out, run.N)
		}
	}
	return out
}

// meanFigures is the mean of the figures of one operator's phases at n.
func meanFigures(r *PeerResult, n int, name string) peerFigures {
	var sum peerFigures
	k := 0
	for _, run := range r.Runs {
		if run.N != n {
			continue
		}
		f := figuresOf(run.Phase(name), n)
		k++
		sum.converged += f.converged
		sum.requests += f.requests
		sum.writes += f.writes
		sum.notFound += f.notFound
		sum.apiserver += f.apiserver
		sum.etcd += f.etcd
		sum.operatorCPU += f.operatorCPU
		sum.steady += f.steady
		sum.after += f.after
		sum.afterRequests += f.afterRequests
		sum.afterWrites += f.afterWrites
		sum.restart += f.restart
		sum.restartWrites += f.restartWrites
		sum.restartReqs += f.restartReqs
	}
	if k == 0 {
		return sum
	}
	d := time.Duration(k)
	return peerFigures{
		converged: sum.converged / d, requests: sum.requests / float64(k), writes: sum.writes / float64(k), notFound: sum.notFound / float64(k),
		apiserver: sum.apiserver / d, etcd: sum.etcd / d, operatorCPU: sum.operatorCPU / d,
		steady: sum.steady / k, after: sum.after / d, afterRequests: sum.afterRequests / k, afterWrites: sum.afterWrites / k, restart: sum.restart / d, restartWrites: sum.restartWrites / k, restartReqs: sum.restartReqs / k,
	}
}

func fratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func headLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}

// WritePeer writes peer.md and peer.json into dir.
func WritePeer(r *PeerResult, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "peer.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "peer.md"), []byte(PeerMarkdown(r)), 0o644)
}
