/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiserverRequests counts the requests the API server has served, by verb and resource, from
// its own apiserver_request_total metric ("APPLY deployments", "PATCH deployments", "GET
// inferenceservices", "POST inferenceservices"), without WATCH and without non-resource requests.
//
// Note: this is how requests of the operator running as its own process are counted: the API
// server sees them without a proxy in between. The counts are of every client, so a window
// subtracts what the benchmark itself sent in it (known exactly: it creates and touches objects).
// The verb APPLY is a server-side apply; PATCH is any other patch (the migration's JSON patch).
type apiserverRequests struct {
	rc rest.Interface
}

func newAPIServerRequests(cfg *rest.Config) (*apiserverRequests, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &apiserverRequests{rc: cs.Discovery().RESTClient()}, nil
}

func (a *apiserverRequests) snapshot(ctx context.Context) (map[string]int, error) {
	data, err := a.rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(line[len("apiserver_request_total{"):end])
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		key, ok := operatorRequest(labels)
		if err != nil || !ok {
			continue
		}
		out[key] += int(v)
	}
	return out, s.Err()
}

// operatorRequest is the "VERB resource[/subresource]" key of a request series of the API
// server's metrics, and whether it can be the operator's (see operatorResources); WATCH is left
// out. The request counts and the latencies use it both, so they count the same requests.
func operatorRequest(labels map[string]string) (string, bool) {
	res, verb := labels["resource"], labels["verb"]
	if res == "" || verb == "WATCH" || !operatorResources[res] ||
		(res == "endpointslices" && verb != "LIST") || (res == "configmaps" && verb == "GET") {
		return "", false
	}
	if sub := labels["subresource"]; sub != "" {
		res += "/" + sub
	}
	return verb + " " + res, true
}

// operatorResources are the resources the operator's role covers. Requests on others are the
// API server's own (the IPAddress of every new Service's ClusterIP, its identity Lease, API
// Priority and Fairness status, the GET of the kubernetes Service's EndpointSlice by its endpoint
// reconciler) and the operator sends none (it runs without leader election, and only lists
// EndpointSlices). GETs of ConfigMaps are the benchmark's neighbour's: the operator reads
// ConfigMaps from its cache only.
var operatorResources = map[string]bool{
	"inferenceservices": true, "modelrouters": true, "deployments": true, "services": true, "configmaps": true,
	"horizontalpodautoscalers": true, "endpointslices": true, "secrets": true, "events": true,
	"models": true, "persistentvolumeclaims": true,
}

// parseLabels reads `a="x",b="y"` (the values of this metric hold no commas or quotes).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// minus removes from m (a delta) what the benchmark itself sent in the window.
func minus(m map[string]int, own map[string]int) map[string]int {
	for k, v := range own {
		if m[k] -= v; m[k] == 0 {
			delete(m, k)
		}
	}
	return m
}

// writes sums the counts that change something: everything but GET and LIST.
func writes(m map[string]int) int {
	_, w := split(m)
	return w
}

// latencySums is the API server's apiserver_request_duration_seconds histogram, as a sum and a
// count per "VERB resource" (the keys of snapshot), at one moment.
type latencySums map[string]struct{ Sum, Count float64 }

// latency reads latencySums for the operator's resources.
func (a *apiserverRequests) latency(ctx context.Context) (latencySums, error) {
	data, err := a.rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, _ := parser.TextToMetricFamilies(bytes.NewReader(data))
	out := latencySums{}
	for _, m := range families["apiserver_request_duration_seconds"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		key, ok := operatorRequest(labels)
		if !ok {
			continue
		}
		e := out[key]
		e.Sum += m.GetHistogram().GetSampleSum()
		e.Count += float64(m.GetHistogram().GetSampleCount())
		out[key] = e
	}
	return out, nil
}

// VerbLatency is the API server's mean latency of one verb and resource over a window, with the
// number of requests it is the mean of.
type VerbLatency struct {
	Requests int          `json:"requests"`
	Mean     jsonDuration `json:"mean"`
}

// latencyDelta is the mean latency per verb and resource between two readings; verbs without a
// request in between are left out.
func latencyDelta(before, after latencySums) map[string]VerbLatency {
	out := map[string]VerbLatency{}
	for k, a := range after {
		b := before[k]
		if n := a.Count - b.Count; n > 0 {
			out[k] = VerbLatency{Requests: int(n), Mean: jsonDuration((a.Sum - b.Sum) / n * float64(time.Second))}
		}
	}
	return out
}
