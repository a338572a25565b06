/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package inferenceservice

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/podmeta"
	"github.com/llmkube/operator/controllers/runtimes"
)

// Labels and annotations the operator sets.
const (
	LabelApp     = "app"
	LabelService = "inference.llmkube.dev/service"
	LabelRuntime = "inference.llmkube.dev/runtime"

	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	AnnotationScrape       = "prometheus.io/scrape"
	AnnotationScrapePath   = "prometheus.io/path"
	AnnotationScrapePort   = "prometheus.io/port"

	// ContainerName is stable across runtimes, so that switching runtime replaces the container's
	// fields instead of adding a second container.
	ContainerName = "model-server"
	// PortName names the serving port in the container, probes and Service.
	PortName = "http"
	// GPUResource is the extended resource a gpu count becomes, unless the Model names another.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
)

// Inputs are the facts beyond the spec that the desired Deployment depends on. The reconciler
// gathers them; the builders stay pure.
type Inputs struct {
	// EmitScrapeAnnotations adds prometheus.io/* hints to the pod template.
	EmitScrapeAnnotations bool
	// Ready is true when the runtime has ready pods; until then startup protection applies.
	Ready bool
	// KeepStartupProtection keeps do-not-disrupt on a template that already has it, so that
	// dropping it never rolls pods on its own.
	KeepStartupProtection bool
	// Replicas to apply; nil leaves spec.replicas to whoever else owns it (the autoscaler).
	Replicas *int32
	// Model is the Model that spec.modelRef names, as resolved; nil with an inline spec.model.
	Model *inferencev1alpha1.Model
}

// SelectorLabels are the Deployment's and the Service's selector: exactly these two keys, never a
// user key, so that the selector of an InferenceService never changes.
func SelectorLabels(name string) map[string]string {
	return map[string]string{LabelApp: name, LabelService: name}
}

func operatorLabels(isvc *inferencev1alpha1.InferenceService) map[string]string {
	l := SelectorLabels(isvc.Name)
	l[LabelRuntime] = string(runtimeOf(isvc))
	if isvc.Spec.ModelRef != "" {
		// As LLMKube's operator labels them: kubectl get pods -l inference.llmkube.dev/model=...
		l[LabelModel] = isvc.Spec.ModelRef
	}
	return l
}

func runtimeOf(isvc *inferencev1alpha1.InferenceService) inferencev1alpha1.Runtime {
	if isvc.Spec.Runtime == "" {
		return inferencev1alpha1.RuntimeLlamaCPP
	}
	return isvc.Spec.Runtime
}

// StartupProtected says whether the spec asks for do-not-disrupt while pods are not Ready
// (the default).
func StartupProtected(isvc *inferencev1alpha1.InferenceService) bool {
	d := isvc.Spec.Disruption
	return d == nil || d.ProtectStartup == nil || *d.ProtectStartup
}

// operatorAnnotations are the operator's hints on the pod template; user annotations win over them.
func operatorAnnotations(isvc *inferencev1alpha1.InferenceService, in Inputs) map[string]string {
	a := map[string]string{}
	d := isvc.Spec.Disruption
	always := d != nil && ptr.Deref(d.ProtectAlways, false)
	startup := StartupProtected(isvc) && (!in.Ready || in.KeepStartupProtection)
	if always || startup {
		a[AnnotationDoNotDisrupt] = "true"
	}
	if in.EmitScrapeAnnotations {
		a[AnnotationScrape] = "true"
		a[AnnotationScrapePath] = "/metrics"
		a[AnnotationScrapePort] = strconv.Itoa(int(runtimes.ResolvedPort(&isvc.Spec)))
	}
	return a
}

func ownerReference(isvc *inferencev1alpha1.InferenceService) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(inferencev1alpha1.GroupVersion.String()).
		WithKind("InferenceService").
		WithName(isvc.Name).
		WithUID(isvc.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// Deployment is the runtime Deployment the operator wants for isvc.
func Deployment(isvc *inferencev1alpha1.InferenceService, in Inputs) (*appsv1ac.DeploymentApplyConfiguration, error) {
	if in.Model != nil {
		isvc = withModel(isvc, in.Model)
	}
	spec := &isvc.Spec
	rt := runtimes.For(runtimeOf(isvc))
	port := runtimes.ResolvedPort(spec)

	gpu := gpuResourceName(in.Model)
	container := corev1ac.Container().
		WithName(ContainerName).
		WithImage(image(spec, rt, gpu, in.Model)).
		WithPorts(corev1ac.ContainerPort().WithName(PortName).WithContainerPort(port).WithProtocol(corev1.ProtocolTCP))
	switch {
	case len(spec.Command) > 0:
		container.WithCommand(spec.Command...)
	case len(rt.Command) > 0 && spec.Image == nil:
		container.WithCommand(rt.Command...)
	}
	if args, _ := rt.Args(spec, port, hardware(spec, in.Model)); len(args) > 0 {
		container.WithArgs(args...)
	}
	for i := range spec.Env {
		env := &corev1ac.EnvVarApplyConfiguration{}
		if err := convert(&spec.Env[i], env); err != nil {
			return nil, fmt.Errorf("spec.env[%d]: %w", i, err)
		}
		container.WithEnv(env)
	}
	r, err := resources(spec.Resources, gpu)
	if err != nil {
		return nil, err
	}
	if r != nil {
		container.WithResources(r)
	}
	if err := addProbes(container, rt, spec.ProbeOverrides); err != nil {
		return nil, err
	}
	if spec.SecurityContext != nil {
		sc := &corev1ac.SecurityContextApplyConfiguration{}
		if err := convert(spec.SecurityContext, sc); err != nil {
			return nil, fmt.Errorf("spec.securityContext: %w", err)
		}
		container.WithSecurityContext(sc)
	}

	cache := addModel(container, isvc, in.Model, rt)
	for i := range spec.ExtraVolumeMounts {
		vm := &corev1ac.VolumeMountApplyConfiguration{}
		if err := convert(&spec.ExtraVolumeMounts[i], vm); err != nil {
			return nil, fmt.Errorf("spec.extraVolumeMounts[%d]: %w", i, err)
		}
		container.WithVolumeMounts(vm)
	}

	podSpec := corev1ac.PodSpec().WithContainers(container)
	if cache != nil {
		podSpec.WithVolumes(cache)
	}
	for i := range spec.ExtraVolumes {
		v := &corev1ac.VolumeApplyConfiguration{}
		if err := convert(&spec.ExtraVolumes[i], v); err != nil {
			return nil, fmt.Errorf("spec.extraVolumes[%d]: %w", i, err)
		}
		podSpec.WithVolumes(v)
	}
	if spec.PodSecurityContext != nil {
		psc := &corev1ac.PodSecurityContextApplyConfiguration{}
		if err := convert(spec.PodSecurityContext, psc); err != nil {
			return nil, fmt.Errorf("spec.podSecurityContext: %w", err)
		}
		podSpec.WithSecurityContext(psc)
	}
	if wantsNonRoot(spec) {
		restrict(podSpec, &podSpec.Containers[0])
	}
	if len(spec.NodeSelector) > 0 {
		podSpec.WithNodeSelector(spec.NodeSelector)
	}
	if t := gpuToleration(spec, in.Model); t != nil {
		podSpec.WithTolerations(t)
	}
	for i := range spec.Tolerations {
		t := &corev1ac.TolerationApplyConfiguration{}
		if err := convert(&spec.Tolerations[i], t); err != nil {
			return nil, fmt.Errorf("spec.tolerations[%d]: %w", i, err)
		}
		podSpec.WithTolerations(t)
	}
	for _, s := range spec.ImagePullSecrets {
		podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(s.Name))
	}
	if err := schedule(podSpec, spec, rt); err != nil {
		return nil, err
	}

	template := corev1ac.PodTemplateSpec().
		WithLabels(podmeta.Labels(operatorLabels(isvc), spec.PodLabels)).
		WithSpec(podSpec)
	if a := podmeta.Annotations(operatorAnnotations(isvc, in), spec.PodAnnotations); a != nil {
		template.WithAnnotations(a)
	}

	depSpec := appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(isvc.Name))).
		WithTemplate(template)
	if in.Replicas != nil {
		depSpec.WithReplicas(*in.Replicas)
	}
	if spec.RevisionHistoryLimit != nil {
		depSpec.WithRevisionHistoryLimit(*spec.RevisionHistoryLimit)
	}
	if gpus(spec) > 0 {
		// Two copies of a GPU model rarely fit on one node: replace, don't surge.
		depSpec.WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType))
	}

	return appsv1ac.Deployment(isvc.Name, isvc.Namespace).
		WithLabels(operatorLabels(isvc)).
		WithOwnerReferences(ownerReference(isvc)).
		WithSpec(depSpec), nil
}

// wantsNonRoot says whether the InferenceService asks for a non-root user, at pod or container
// level. Such a pod is made to satisfy the restricted Pod Security Standard.
func wantsNonRoot(spec *inferencev1alpha1.InferenceServiceSpec) bool {
	return (spec.PodSecurityContext != nil && ptr.Deref(spec.PodSecurityContext.RunAsNonRoot, false)) ||
		(spec.SecurityContext != nil && ptr.Deref(spec.SecurityContext.RunAsNonRoot, false))
}

// restrict fills in what the restricted Pod Security Standard requires and the spec left unset:
// no privilege escalation, every capability dropped, and the runtime's default seccomp profile.
// A value the user set explicitly is kept, even a weaker one: it is theirs to choose.
//
// Note: runtime images often run as root, so this applies only when the spec asks for non-root;
// other inference pods satisfy the baseline standard as they are.
func restrict(pod *corev1ac.PodSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
	if c.SecurityContext == nil {
		c.WithSecurityContext(corev1ac.SecurityContext())
	}
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil {
		sc.WithAllowPrivilegeEscalation(false)
	}
	if sc.Capabilities == nil {
		sc.WithCapabilities(corev1ac.Capabilities())
	}
	if !slices.Contains(sc.Capabilities.Drop, corev1.Capability("ALL")) {
		sc.Capabilities.WithDrop("ALL")
	}
	if sc.SeccompProfile == nil && (pod.SecurityContext == nil || pod.SecurityContext.SeccompProfile == nil) {
		if pod.SecurityContext == nil {
			pod.WithSecurityContext(corev1ac.PodSecurityContext())
		}
		pod.SecurityContext.WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
	}
}

func gpus(spec *inferencev1alpha1.InferenceServiceSpec) int32 {
	if spec.Resources == nil {
		return 0
	}
	return ptr.Deref(spec.Resources.GPU, 0)
}

// resources returns nil when the spec asks for nothing, so the apply never claims an empty
// resources struct.
func resources(r *inferencev1alpha1.ResourceSpec, gpu corev1.ResourceName) (*corev1ac.ResourceRequirementsApplyConfiguration, error) {
	if r == nil {
		return nil, nil
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	if r.CPU != nil {
		requests[corev1.ResourceCPU] = *r.CPU
	}
	req, lim, err := memory(r)
	if err != nil {
		return nil, fmt.Errorf("spec.resources.hostMemory %q is not a quantity: %w", r.HostMemory, err)
	}
	if req != nil {
		requests[corev1.ResourceMemory] = *req
		limits[corev1.ResourceMemory] = *lim
	}
	if r.EphemeralStorage != "" {
		q, err := resource.ParseQuantity(r.EphemeralStorage)
		if err != nil {
			return nil, fmt.Errorf("spec.resources.ephemeralStorage %q is not a quantity: %w", r.EphemeralStorage, err)
		}
		requests[corev1.ResourceEphemeralStorage] = q
		limits[corev1.ResourceEphemeralStorage] = q
	}
	if g := ptr.Deref(r.GPU, 0); g > 0 {
		limits[gpu] = *resource.NewQuantity(int64(g), resource.DecimalSI)
	}
	if len(requests) == 0 && len(limits) == 0 {
		return nil, nil
	}
	out := corev1ac.ResourceRequirements()
	if len(requests) > 0 {
		out.WithRequests(requests)
	}
	if len(limits) > 0 {
		out.WithLimits(limits)
	}
	return out, nil
}

// addProbes checks the runtime's health path, or its port where it has none, each with five
// seconds to answer (a server busy with a long prompt answers slowly; the default one second
// restarts it under load). The startup probe allows an hour for downloading and loading a model.
// spec.probeOverrides replaces a probe whole.
func addProbes(c *corev1ac.ContainerApplyConfiguration, rt runtimes.Runtime, o *inferencev1alpha1.ProbeOverrides) error {
	handler := func() *corev1ac.ProbeApplyConfiguration {
		p := corev1ac.Probe().WithTimeoutSeconds(5)
		if rt.HealthPath == "" {
			return p.WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString(PortName)))
		}
		return p.WithHTTPGet(corev1ac.HTTPGetAction().WithPath(rt.HealthPath).WithPort(intstr.FromString(PortName)))
	}
	startup := handler().WithPeriodSeconds(10).WithFailureThreshold(360)
	readiness := handler().WithPeriodSeconds(10)
	liveness := handler().WithPeriodSeconds(30).WithFailureThreshold(5)
	if o != nil {
		for _, p := range []struct {
			field string
			in    *corev1.Probe
			out   **corev1ac.ProbeApplyConfiguration
		}{{"startup", o.Startup, &startup}, {"readiness", o.Readiness, &readiness}, {"liveness", o.Liveness, &liveness}} {
			if p.in == nil {
				continue
			}
			*p.out = &corev1ac.ProbeApplyConfiguration{}
			if err := convert(p.in, *p.out); err != nil {
				return fmt.Errorf("spec.probeOverrides.%s: %w", p.field, err)
			}
		}
	}
	c.WithStartupProbe(startup).WithReadinessProbe(readiness).WithLivenessProbe(liveness)
	return nil
}

// Service exposes the runtime on spec.endpoint.port (or the resolved port), selecting exactly the
// selector labels.
func Service(isvc *inferencev1alpha1.InferenceService) *corev1ac.ServiceApplyConfiguration {
	spec := &isvc.Spec
	svcType := corev1.ServiceTypeClusterIP
	if spec.Endpoint != nil && spec.Endpoint.Type != nil {
		svcType = corev1.ServiceType(*spec.Endpoint.Type)
	}
	port := corev1ac.ServicePort().
		WithName(PortName).
		WithProtocol(corev1.ProtocolTCP).
		WithPort(runtimes.ServicePort(spec)).
		WithTargetPort(intstr.FromInt32(runtimes.ResolvedPort(spec)))
	if e := spec.Endpoint; e != nil && e.NodePort != nil && svcType != corev1.ServiceTypeClusterIP {
		// A fixed node port (LLMKube's endpoint.nodePort); only NodePort and LoadBalancer have one.
		port.WithNodePort(*e.NodePort)
	}
	return corev1ac.Service(isvc.Name, isvc.Namespace).
		WithLabels(operatorLabels(isvc)).
		WithOwnerReferences(ownerReference(isvc)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(svcType).
			WithSelector(SelectorLabels(isvc.Name)).
			WithPorts(port))
}

// HPA is the HorizontalPodAutoscaler for isvc, or nil when spec.autoscaling is not set.
func HPA(isvc *inferencev1alpha1.InferenceService) (*autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration, error) {
	as := isvc.Spec.Autoscaling
	if as == nil {
		return nil, nil
	}
	spec := autoscalingv2ac.HorizontalPodAutoscalerSpec().
		WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().
			WithAPIVersion("apps/v1").WithKind("Deployment").WithName(isvc.Name)).
		WithMinReplicas(ptr.Deref(as.MinReplicas, 1)).
		WithMaxReplicas(as.MaxReplicas)
	metrics := make([]autoscalingv2.MetricSpec, 0, len(as.Metrics))
	for i := range as.Metrics {
		m, err := hpaMetric(&as.Metrics[i])
		if err != nil {
			return nil, fmt.Errorf("spec.autoscaling.metrics[%d]: %w", i, err)
		}
		metrics = append(metrics, m)
	}
	if len(metrics) == 0 {
		metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)},
			},
		}}
	}
	for i := range metrics {
		m := &autoscalingv2ac.MetricSpecApplyConfiguration{}
		if err := convert(&metrics[i], m); err != nil {
			return nil, fmt.Errorf("spec.autoscaling.metrics[%d]: %w", i, err)
		}
		spec.WithMetrics(m)
	}
	return autoscalingv2ac.HorizontalPodAutoscaler(isvc.Name, isvc.Namespace).
		WithLabels(operatorLabels(isvc)).
		WithOwnerReferences(ownerReference(isvc)).
		WithSpec(spec), nil
}

// Endpoint is the in-cluster URL of the model's API, with spec.endpoint.path (status.endpoint,
// as LLMKube reports it: the chat completions URL where its schema defaulted the path).
func Endpoint(isvc *inferencev1alpha1.InferenceService) string {
	path := ""
	if isvc.Spec.Endpoint != nil {
		path = ptr.Deref(isvc.Spec.Endpoint.Path, "")
	}
	return BaseURL(isvc) + path
}

// BaseURL is the in-cluster URL of the model's server, without spec.endpoint.path: a router
// appends each request's own path (/v1/chat/completions, /v1/embeddings) to it.
func BaseURL(isvc *inferencev1alpha1.InferenceService) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", isvc.Name, isvc.Namespace, runtimes.ServicePort(&isvc.Spec))
}

// convert turns an API value the user wrote into its apply configuration. Both have the same JSON
// form, and the API value's omitempty tags keep fields the user left unset out of the apply.
func convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
