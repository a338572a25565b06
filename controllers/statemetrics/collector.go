/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package statemetrics exposes the state of the operator's objects (InferenceServices and
// ModelRouters by phase, replicas, resolved backends, Gateway acceptance, rollouts waiting) as
// gauges computed at scrape time from the informer cache, the way kube-state-metrics does for
// built-in kinds.
//
// Note: reading the cache costs no API request, and computing at scrape time means a gauge can
// never go stale when an object is deleted (no series to forget), nor disagree with status.
package statemetrics

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/rollout"
)

// Phases of the llmkube_inferenceservices and llmkube_modelrouters gauges: every one is emitted
// for every namespace that has an object, 0 included, so a query never meets a missing series.
var (
	inferenceServicePhases = []string{string(inferencev1alpha1.PhasePending), string(inferencev1alpha1.PhaseProgressing),
		string(inferencev1alpha1.PhaseReady), string(inferencev1alpha1.PhaseDegraded)}
	// A ModelRouter has no status.phase: RouterPhase derives one from its conditions.
	modelRouterPhases = []string{string(inferencev1alpha1.PhasePending), string(inferencev1alpha1.PhaseReady),
		string(inferencev1alpha1.PhaseDegraded)}
)

// Gateway states of llmkube_inferenceservice_gateways, from the GatewayReady condition.
const (
	GatewayAccepted   = "accepted"
	GatewayRefused    = "refused"
	GatewayPending    = "pending"
	GatewayCRDMissing = "crd_missing"
)

var gatewayStates = []string{GatewayAccepted, GatewayRefused, GatewayPending, GatewayCRDMissing}

// Reasons of llmkube_inferenceservice_rollout_deferred: the RolloutDeferred condition's.
var deferralReasons = []string{rollout.ReasonWaitingForIdle, rollout.ReasonIdleTimeoutNotForced, rollout.ReasonIdleDetectionUnsupported}

// ReasonCRDNotInstalled is the GatewayReady reason of a missing Gateway API CRD
// (inferenceservice.ReasonCRDNotInstalled; repeated here so this package stays below the
// reconcilers).
const ReasonCRDNotInstalled = "CRDNotInstalled"

var (
	descISVCs = prometheus.NewDesc("llmkube_inferenceservices",
		"InferenceServices by namespace and status.phase (Pending, Progressing, Ready, Degraded), from the operator's cache.",
		[]string{"namespace", "phase"}, nil)
	descISVCPhase = prometheus.NewDesc("llmkube_inferenceservice_phase",
		"1 for each InferenceService, labelled with its current status.phase (Unknown before the operator's first status write).",
		[]string{"namespace", "name", "phase"}, nil)
	descReady = prometheus.NewDesc("llmkube_inferenceservice_replicas_ready",
		"Runtime pods of an InferenceService that are ready (status.readyReplicas).",
		[]string{"namespace", "name"}, nil)
	descWanted = prometheus.NewDesc("llmkube_inferenceservice_replicas_wanted",
		"Runtime pods an InferenceService wants (the denominator of status.ready: the HPA's or the spec's replicas).",
		[]string{"namespace", "name"}, nil)
	descGateways = prometheus.NewDesc("llmkube_inferenceservice_gateways",
		"InferenceServices with spec.gateway by namespace and the state of their GatewayReady condition: accepted, refused (a Gateway refused the route or pool), pending (not answered yet), crd_missing (Gateway API CRDs not installed).",
		[]string{"namespace", "state"}, nil)
	descDeferred = prometheus.NewDesc("llmkube_inferenceservice_rollout_deferred",
		"InferenceServices whose pod-template change waits at the rollout gate (RolloutDeferred=True), by namespace and reason.",
		[]string{"namespace", "reason"}, nil)
	descDeferredSeconds = prometheus.NewDesc("llmkube_inferenceservice_rollout_deferred_seconds",
		"How long an InferenceService's pod-template change has waited at the rollout gate so far (since RolloutDeferred became True); absent when it does not wait.",
		[]string{"namespace", "name"}, nil)
	descRouters = prometheus.NewDesc("llmkube_modelrouters",
		"ModelRouters by namespace and phase (Pending, Ready, Degraded; derived from the Degraded and Ready conditions), from the operator's cache.",
		[]string{"namespace", "phase"}, nil)
	descBackends = prometheus.NewDesc("llmkube_modelrouter_backends",
		"Backends a ModelRouter lists in spec.backends.",
		[]string{"namespace", "name"}, nil)
	descResolved = prometheus.NewDesc("llmkube_modelrouter_backends_resolved",
		"Backends of a ModelRouter that resolve (status.backends[].resolved); the proxy serves only these.",
		[]string{"namespace", "name"}, nil)
	descScrapeErrors = prometheus.NewDesc("llmkube_state_metrics_list_errors",
		"1 when this scrape could not list a kind from the cache (the gauges of that kind are then missing), by kind.",
		[]string{"kind"}, nil)
)

// DefaultTimeout bounds one scrape's read of the cache: a cache not started or synced yet (a
// replica starting) must not hold the scrape until Prometheus gives up.
const DefaultTimeout = 5 * time.Second

// Collector computes the gauges from Reader (the manager's cache) at each scrape.
type Collector struct {
	Reader client.Reader
	// Timeout of one scrape's lists; DefaultTimeout when zero.
	Timeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Describe sends every descriptor, so the registry checks names and labels once at registration.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descISVCs, descISVCPhase, descReady, descWanted, descGateways, descDeferred,
		descDeferredSeconds, descRouters, descBackends, descResolved, descScrapeErrors} {
		ch <- d
	}
}

// Collect lists both kinds from the cache and sends their gauges.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}

	var isvcs inferencev1alpha1.InferenceServiceList
	err := c.Reader.List(ctx, &isvcs)
	c.listed(ctx, ch, "InferenceService", err)
	if err == nil {
		collectInferenceServices(ch, isvcs.Items, now)
	}
	var routers inferencev1alpha1.ModelRouterList
	err = c.Reader.List(ctx, &routers)
	c.listed(ctx, ch, "ModelRouter", err)
	if err == nil {
		collectModelRouters(ch, routers.Items)
	}
}

func (c *Collector) listed(ctx context.Context, ch chan<- prometheus.Metric, kind string, err error) {
	v := 0.0
	if err != nil {
		v = 1
		log.FromContext(ctx).WithName("statemetrics").Error(err, "listing from the cache for metrics", "kind", kind)
	}
	ch <- prometheus.MustNewConstMetric(descScrapeErrors, prometheus.GaugeValue, v, kind)
}

func collectInferenceServices(ch chan<- prometheus.Metric, items []inferencev1alpha1.InferenceService, now time.Time) {
	byPhase := map[string]map[string]int{}  // namespace -> phase -> count
	gateways := map[string]map[string]int{} // namespace -> state -> count
	deferred := map[string]map[string]int{} // namespace -> reason -> count
	for i := range items {
		isvc := &items[i]
		ns, name := isvc.Namespace, isvc.Name
		phase := string(isvc.Status.Phase)
		if phase == "" {
			phase = "Unknown"
		}
		count(byPhase, ns, phase)
		// Every namespace with an InferenceService gets every gateway state and deferral reason,
		// 0 included: a query or an alert then never meets a missing series.
		ensure(gateways, ns)
		ensure(deferred, ns)
		ch <- prometheus.MustNewConstMetric(descISVCPhase, prometheus.GaugeValue, 1, ns, name, phase)
		ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, float64(isvc.Status.ReadyReplicas), ns, name)
		if wanted, ok := Wanted(isvc.Status.Ready); ok {
			ch <- prometheus.MustNewConstMetric(descWanted, prometheus.GaugeValue, float64(wanted), ns, name)
		}
		if isvc.Spec.Gateway != nil {
			count(gateways, ns, GatewayState(meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)))
		}
		if c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionRolloutDeferred); c != nil && c.Status == metav1.ConditionTrue {
			count(deferred, ns, c.Reason)
			ch <- prometheus.MustNewConstMetric(descDeferredSeconds, prometheus.GaugeValue, now.Sub(c.LastTransitionTime.Time).Seconds(), ns, name)
		}
	}
	emit(ch, descISVCs, byPhase, inferenceServicePhases)
	emit(ch, descGateways, gateways, gatewayStates)
	emit(ch, descDeferred, deferred, deferralReasons)
}

func collectModelRouters(ch chan<- prometheus.Metric, items []inferencev1alpha1.ModelRouter) {
	byPhase := map[string]map[string]int{}
	for i := range items {
		r := &items[i]
		count(byPhase, r.Namespace, RouterPhase(r))
		resolved := 0
		for _, b := range r.Status.Backends {
			if b.Resolved {
				resolved++
			}
		}
		ch <- prometheus.MustNewConstMetric(descBackends, prometheus.GaugeValue, float64(len(r.Spec.Backends)), r.Namespace, r.Name)
		ch <- prometheus.MustNewConstMetric(descResolved, prometheus.GaugeValue, float64(resolved), r.Namespace, r.Name)
	}
	emit(ch, descRouters, byPhase, modelRouterPhases)
}

// RouterPhase is a ModelRouter's one-word state: Degraded when the operator could not apply it,
// else Ready when a proxy replica is available, else Pending.
func RouterPhase(r *inferencev1alpha1.ModelRouter) string {
	switch {
	case meta.IsStatusConditionTrue(r.Status.Conditions, inferencev1alpha1.ConditionDegraded):
		return string(inferencev1alpha1.PhaseDegraded)
	case meta.IsStatusConditionTrue(r.Status.Conditions, inferencev1alpha1.ConditionReady):
		return string(inferencev1alpha1.PhaseReady)
	}
	return string(inferencev1alpha1.PhasePending)
}

// GatewayState maps the GatewayReady condition (nil: not reported yet) to a gauge state.
func GatewayState(c *metav1.Condition) string {
	switch {
	case c == nil || c.Status == metav1.ConditionUnknown:
		return GatewayPending
	case c.Status == metav1.ConditionTrue:
		return GatewayAccepted
	case c.Reason == ReasonCRDNotInstalled:
		return GatewayCRDMissing
	}
	return GatewayRefused
}

// Wanted reads the number of wanted replicas from status.ready ("ready/wanted").
func Wanted(ready string) (int, bool) {
	_, w, ok := strings.Cut(ready, "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	return n, err == nil
}

func count(m map[string]map[string]int, ns, key string) {
	ensure(m, ns)
	m[ns][key]++
}

func ensure(m map[string]map[string]int, ns string) {
	if m[ns] == nil {
		m[ns] = map[string]int{}
	}
}

// emit sends one gauge per namespace and key, and a 0 for each of zeros the namespace lacks.
func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, m map[string]map[string]int, zeros []string) {
	for ns, counts := range m {
		for _, k := range zeros {
			if _, ok := counts[k]; !ok {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, 0, ns, k)
			}
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(n), ns, k)
		}
	}
}
