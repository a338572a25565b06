/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package rollout

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Load is what the runtime pods report about requests in flight.
type Load struct {
	// Pods is how many ready endpoints were asked.
	Pods int
	// Busy is how many of them have a request in flight or did not answer.
	Busy int
	// InFlight is the sum of the in-flight gauge over the pods that answered.
	InFlight float64
	// Unreadable names each pod whose metrics could not be read, with why: a pod that runs no
	// runtime (a KWOK pod of `make run`'s dev cluster), a wrong port, a runtime without the gauge.
	// They count as busy; naming them turns a wait that would look like a stall into a cause.
	Unreadable []string
}

// Idle is true when no pod has a request in flight and every pod answered.
func (l Load) Idle() bool { return l.Busy == 0 }

// Prober reads the in-flight gauge of a Service's ready endpoints.
type Prober struct {
	// Reader lists EndpointSlices. The reconciler passes an uncached reader: the gate asks only
	// while a roll waits, so an informer over every EndpointSlice of the cluster would cost memory
	// for nothing the rest of the time.
	Reader client.Reader
	// HTTP asks each endpoint; its Timeout bounds each request.
	HTTP *http.Client
}

// DefaultTimeout bounds one metrics request: an endpoint slower than this counts as busy.
const DefaultTimeout = 2 * time.Second

// NewProber returns a prober with the default per-request timeout.
func NewProber(reader client.Reader) *Prober {
	return &Prober{Reader: reader, HTTP: &http.Client{Timeout: DefaultTimeout}}
}

// Load sums metric over the ready endpoints of the Service namespace/service on the port named
// portName (or the only port). An endpoint that does not answer, or answers without the metric,
// counts as busy: a roll must never guess that a silent pod is idle.
func (p *Prober) Load(ctx context.Context, namespace, service, portName, metric string) (Load, error) {
	slices := &discoveryv1.EndpointSliceList{}
	if err := p.Reader.List(ctx, slices, client.InNamespace(namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return Load{}, fmt.Errorf("listing the EndpointSlices of Service %s: %w", service, err)
	}
	var load Load
	for _, s := range slices.Items {
		port, ok := slicePort(s, portName)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			if !ptr.Deref(ep.Conditions.Ready, true) || len(ep.Addresses) == 0 {
				continue
			}
			load.Pods++
			n, err := p.inFlight(ctx, "http://"+net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port)))+"/metrics", metric)
			if err != nil {
				load.Unreadable = append(load.Unreadable, fmt.Sprintf("%s (%v)", endpointName(ep), err))
			}
			if err != nil || n > 0 {
				load.Busy++
			}
			load.InFlight += n
		}
	}
	return load, nil
}

// endpointName is the pod behind an endpoint, else its address.
func endpointName(ep discoveryv1.Endpoint) string {
	if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" && ep.TargetRef.Name != "" {
		return "pod " + ep.TargetRef.Name
	}
	return "endpoint " + ep.Addresses[0]
}

func slicePort(s discoveryv1.EndpointSlice, name string) (int32, bool) {
	for _, p := range s.Ports {
		if p.Port != nil && (ptr.Deref(p.Name, "") == name || len(s.Ports) == 1) {
			return *p.Port, true
		}
	}
	return 0, false
}

// inFlight reads one endpoint's metrics in the Prometheus text format and sums the gauge.
func (p *Prober) inFlight(ctx context.Context, url, metric string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := p.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("parsing the metrics of %s: %w", url, err)
	}
	family, ok := families[metric]
	if !ok {
		return 0, fmt.Errorf("%s has no metric %s", url, metric)
	}
	var sum float64
	for _, m := range family.GetMetric() {
		switch {
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			sum += m.GetUntyped().GetValue()
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		}
	}
	return sum, nil
}
