/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/podmeta"
	"github.com/llmkube/operator/version"
)

// Labels, annotations and names the operator sets on a router's objects.
const (
	LabelApp         = "app"
	LabelModelRouter = "inference.llmkube.dev/model-router"

	// No hash of the routing document is on the pod template: the proxy rereads its mounted
	// document and switches to it for new requests (internal/routerproxy DocumentWatcher), so a
	// routing change cuts no stream. An image, flag, env or resource change still rolls the pods.
	AnnotationScrape     = "prometheus.io/scrape"
	AnnotationScrapePath = "prometheus.io/path"
	AnnotationScrapePort = "prometheus.io/port"

	// ImageRepository is the proxy image's repository; the operator's --router-proxy-image
	// defaults to it with the operator's own version as tag (never :latest, so an operator and the
	// proxy that reads its routing document are upgraded together).
	ImageRepository = "ghcr.io/llmkube/router-proxy"
	// ContainerName is the proxy container.
	ContainerName = "router-proxy"
	// PortName and Port are the proxy's serving port; MetricsPortName and MetricsPort its metrics.
	PortName        = "http"
	Port            = int32(8080)
	MetricsPortName = "metrics"
	MetricsPort     = int32(9090)
	// DefaultServicePort is the Service port when spec.endpoint.port is not set.
	DefaultServicePort = int32(8080)

	// ConfigKey is the ConfigMap key holding the routing document, mounted at ConfigDir.
	ConfigKey = "config.json"
	ConfigDir = "/etc/router-proxy"
	// APIKeysDir is where spec.proxy.apiKeySecretRef is mounted: one file per key of the Secret.
	APIKeysDir = "/etc/router-proxy-api-keys"
	// CredentialsDir is where the backends' credentials Secrets are mounted: a directory per
	// backend, named after it, with the Secret's API_KEY, ORGANIZATION and PROJECT files.
	CredentialsDir = "/etc/router-proxy-credentials"

	// DrainSeconds is how long the proxy lets in-flight requests and streams finish after SIGTERM
	// (its --drain-timeout), after ShutdownDelaySeconds of failing readiness so that the Service
	// stops sending new requests; TerminationGracePeriodSeconds is larger than both together, so
	// the kubelet never kills a proxy that is still draining.
	ShutdownDelaySeconds          = 5
	DrainSeconds                  = 30
	TerminationGracePeriodSeconds = int64(ShutdownDelaySeconds + DrainSeconds + 10)

	configVolume  = "config"
	tmpVolume     = "tmp"
	apiKeysVolume = "api-keys"
	// credentialsVolumeName: one projected volume for every backend's Secret, so that a backend
	// name of 63 characters needs no volume name of its own.
	credentialsVolumeName = "credentials"
	nameSuffix            = "-router-proxy"
)

var (
	defaultCPU = resource.MustParse("100m")
	// defaultMemory fits the concurrency docs/router.md ("Body memory budget") documents: the
	// proxy derives its budget of request bodies in flight from GOMEMLIMIT (90% of this), as
	// (GOMEMLIMIT - 40 MiB) / 2 = 95 MiB: 3 concurrent 25 MB uploads, 23 4 MiB prompts or 249
	// 400 KB ones; more get 503 with Retry-After rather than an OOM kill.
	defaultMemory = resource.MustParse("256Mi")
	// tmpSize bounds the writable /tmp the read-only root filesystem leaves the proxy; it also keeps
	// the emptyDir from being an empty struct in the apply.
	tmpSize = resource.MustParse("16Mi")
)

// DefaultImage is the proxy image of this operator's version: ImageRepository tagged with
// version.Version.
func DefaultImage() string { return ImageRepository + ":" + version.Version }

// Name is the name of the ConfigMap, Deployment and Service of router.
func Name(router *inferencev1alpha1.ModelRouter) string { return router.Name + nameSuffix }

// SelectorLabels are the Deployment's and the Service's selector: exactly these two keys, never a
// user key, so the selector never changes.
func SelectorLabels(routerName string) map[string]string {
	return map[string]string{LabelApp: routerName + nameSuffix, LabelModelRouter: routerName}
}

// Lookup is what the reconciler found of a router's references in the cache: the
// InferenceServices by name, and the names of the Secrets that exist (never their data).
type Lookup struct {
	InferenceServices map[string]*inferencev1alpha1.InferenceService
	Secrets           map[string]bool
	// Unserved says, by InferenceService name, why one that exists does not resolve: its Service
	// or Deployment is missing or not controlled by it.
	Unserved map[string]string
}

// Resolution is how one backend resolved.
type Resolution struct {
	Backend  *inferencev1alpha1.Backend
	URL      string
	Resolved bool
	Message  string
	// Service is the InferenceService's Service, whose EndpointSlices the proxy balances over.
	Service *routingv1.Service
	// StreamUsage is whether the proxy asks the backend for a stream's usage (StreamUsage).
	StreamUsage bool
	// Metrics is where the backend's pods report their load, for EngineAware (EngineMetrics).
	Metrics *routingv1.EngineMetrics
}

// Resolve resolves every backend of router against what was found, in spec order.
func Resolve(router *inferencev1alpha1.ModelRouter, found Lookup) []Resolution {
	out := make([]Resolution, 0, len(router.Spec.Backends))
	for i := range router.Spec.Backends {
		b := &router.Spec.Backends[i]
		r := Resolution{Backend: b}
		switch {
		case b.InferenceServiceRef != nil:
			isvc, ok := found.InferenceServices[b.InferenceServiceRef.Name]
			if !ok || isvc == nil {
				r.Message = fmt.Sprintf("InferenceService %q not found", b.InferenceServiceRef.Name)
				break
			}
			if why := found.Unserved[isvc.Name]; why != "" {
				r.Message = why
				break
			}
			r.Resolved = true
			// The server's URL, not status.endpoint: LLMKube's schema defaults spec.endpoint.path to
			// /v1/chat/completions, and the proxy appends each request's own path.
			r.URL = inferenceservice.BaseURL(isvc)
			r.Service = &routingv1.Service{Namespace: isvc.Namespace, Name: isvc.Name, Port: inferenceservice.PortName}
			r.StreamUsage = StreamUsage(b, isvc)
			r.Metrics = EngineMetrics(router, isvc)
		case b.External != nil:
			if s := b.External.CredentialsSecretRef; s != nil && !found.Secrets[s.Name] {
				r.Message = fmt.Sprintf("Secret %q not found", s.Name)
				break
			}
			u, why := externalURL(b.External)
			if why != "" {
				r.Message = why
				break
			}
			r.Resolved = true
			r.URL = u
			r.StreamUsage = StreamUsage(b, nil)
		default:
			r.Message = "the backend sets neither inferenceServiceRef nor external"
		}
		out = append(out, r)
	}
	return out
}

// Document is the routing document the proxy reads (routingv1.Document, the one type both
// sides share). Backends are sorted by name; rules keep the spec's order (they are tried in order)
// with their models sorted; only resolved backends appear. A rule, fallback or defaultRoute naming
// a backend that is not listed is unavailable: the proxy answers 503 for it rather than sending
// the request elsewhere.
func Document(router *inferencev1alpha1.ModelRouter, res []Resolution) routingv1.Document {
	doc := routingv1.Document{Backends: []routingv1.Backend{}, DefaultRoute: ptr.Deref(router.Spec.DefaultRoute, "")}
	if p := router.Spec.Proxy; p != nil && p.Balancing != nil {
		doc.Balancing = string(*p.Balancing)
	}
	doc.Engine = EngineScoring(router)
	doc.Clients, doc.Limits = Clients(router)
	for _, r := range res {
		if !r.Resolved {
			continue
		}
		b := routingv1.Backend{Name: r.Backend.Name, Kind: routingv1.KindInferenceService, URL: r.URL, Service: r.Service, StreamUsage: r.StreamUsage, Metrics: r.Metrics}
		if ext := r.Backend.External; ext != nil {
			b.Kind = routingv1.KindExternal
			b.Provider = ext.Provider
			b.Model = ptr.Deref(ext.Model, "")
			b.Credentials = ext.CredentialsSecretRef != nil
		}
		doc.Backends = append(doc.Backends, b)
	}
	slices.SortFunc(doc.Backends, func(a, b routingv1.Backend) int { return strings.Compare(a.Name, b.Name) })
	for _, rule := range router.Spec.Rules {
		if rule.Backend == "" {
			// A rule of LLMKube's form (match and route): the plan is not applied (Unserved).
			continue
		}
		models := slices.Clone(rule.Models)
		slices.Sort(models)
		doc.Rules = append(doc.Rules, routingv1.Rule{Name: rule.Name, Models: models, Backend: rule.Backend, Fallbacks: slices.Clone(rule.Fallbacks), Timeout: ptr.Deref(rule.Timeout, "")})
	}
	return doc
}

// ConfigData is the ConfigMap's data: the same spec and resolutions always give the same bytes.
func ConfigData(router *inferencev1alpha1.ModelRouter, res []Resolution) (map[string]string, error) {
	doc, err := routingv1.Marshal(Document(router, res))
	if err != nil {
		return nil, err
	}
	return map[string]string{ConfigKey: string(doc)}, nil
}

func ownerReference(router *inferencev1alpha1.ModelRouter) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(inferencev1alpha1.GroupVersion.String()).
		WithKind("ModelRouter").
		WithName(router.Name).
		WithUID(router.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// ConfigMap holds the routing document.
func ConfigMap(router *inferencev1alpha1.ModelRouter, data map[string]string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(Name(router), router.Namespace).
		WithLabels(SelectorLabels(router.Name)).
		WithOwnerReferences(ownerReference(router)).
		WithData(data)
}

// Inputs are the facts beyond the spec the Deployment depends on.
type Inputs struct {
	// EmitScrapeAnnotations adds prometheus.io/* hints for the metrics port.
	EmitScrapeAnnotations bool
	// Resolutions of the backends: only resolved external backends' Secrets are mounted.
	Resolutions []Resolution
	// Image is the proxy image when spec.proxy.image is not set (--router-proxy-image);
	// DefaultImage() when empty.
	Image string
}

func scrapeAnnotations(in Inputs) map[string]string {
	if !in.EmitScrapeAnnotations {
		return nil
	}
	return map[string]string{
		AnnotationScrape:     "true",
		AnnotationScrapePath: "/metrics",
		AnnotationScrapePort: strconv.Itoa(int(MetricsPort)),
	}
}

// Deployment is the router-proxy Deployment.
func Deployment(router *inferencev1alpha1.ModelRouter, in Inputs) *appsv1ac.DeploymentApplyConfiguration {
	proxy := router.Spec.Proxy
	if proxy == nil {
		proxy = &inferencev1alpha1.ProxySpec{}
	}

	cpu, memory := defaultCPU, defaultMemory
	if proxy.Resources != nil && proxy.Resources.CPU != nil {
		cpu = *proxy.Resources.CPU
	}
	if proxy.Resources != nil && proxy.Resources.Memory != nil {
		memory = *proxy.Resources.Memory
	}

	container := corev1ac.Container().
		WithName(ContainerName).
		WithImage(ptr.Deref(proxy.Image, cmp.Or(in.Image, DefaultImage()))).
		WithArgs(args(router.Name, proxy)...).
		WithPorts(
			corev1ac.ContainerPort().WithName(PortName).WithContainerPort(Port).WithProtocol(corev1.ProtocolTCP),
			corev1ac.ContainerPort().WithName(MetricsPortName).WithContainerPort(MetricsPort).WithProtocol(corev1.ProtocolTCP)).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: memory})).
		// The Go runtime collects before the container's limit rather than after it: the proxy
		// reads the limit in bytes and keeps 90% of it (cmd/router-proxy memoryLimit).
		WithEnv(corev1ac.EnvVar().WithName("GOMEMLIMIT").WithValueFrom(corev1ac.EnvVarSource().
			WithResourceFieldRef(corev1ac.ResourceFieldSelector().WithContainerName(ContainerName).WithResource("limits.memory").WithDivisor(resource.MustParse("1"))))).
		WithReadinessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/readyz").WithPort(intstr.FromString(PortName))).
			WithPeriodSeconds(5).
			WithFailureThreshold(1)).
		WithLivenessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/healthz").WithPort(intstr.FromString(PortName))).
			WithPeriodSeconds(10).
			WithFailureThreshold(3)).
		WithSecurityContext(corev1ac.SecurityContext().
			WithRunAsNonRoot(true).
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName(configVolume).WithMountPath(ConfigDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName(tmpVolume).WithMountPath("/tmp"))
	if proxy.APIKeySecretRef != nil {
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName(apiKeysVolume).WithMountPath(APIKeysDir).WithReadOnly(true))
	}
	credentials := credentialsVolume(in.Resolutions)
	if credentials != nil {
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName(credentialsVolumeName).WithMountPath(CredentialsDir).WithReadOnly(true))
		container.WithArgs("--credentials-dir=" + CredentialsDir)
	}

	// The container is copied into the pod spec: everything it holds is set before.
	redis, redisArg := redisPassword(router)
	if redis != nil {
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName(redisVolumeName).WithMountPath(RedisPasswordDir).WithReadOnly(true))
		container.WithArgs(redisArg)
	}

	podSpec := corev1ac.PodSpec().
		WithServiceAccountName(Name(router)).
		WithContainers(container).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithVolumes(
			corev1ac.Volume().WithName(configVolume).WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(Name(router))),
			corev1ac.Volume().WithName(tmpVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource().WithSizeLimit(tmpSize))).
		WithTerminationGracePeriodSeconds(TerminationGracePeriodSeconds)
	if s := proxy.APIKeySecretRef; s != nil {
		// A volume, not env: the kubelet updates a mounted Secret in place, and the proxy rereads it,
		// so a rotated key works without a restart.
		podSpec.WithVolumes(corev1ac.Volume().WithName(apiKeysVolume).WithSecret(corev1ac.SecretVolumeSource().WithSecretName(s.Name)))
	}
	if credentials != nil {
		podSpec.WithVolumes(credentials)
	}
	if redis != nil {
		podSpec.WithVolumes(redis)
	}
	if len(proxy.NodeSelector) > 0 {
		podSpec.WithNodeSelector(proxy.NodeSelector)
	}
	for _, s := range proxy.ImagePullSecrets {
		podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(s.Name))
	}

	template := corev1ac.PodTemplateSpec().
		WithLabels(podmeta.Labels(SelectorLabels(router.Name), proxy.PodLabels)).
		WithSpec(podSpec)
	if a := podmeta.AnnotationsPinned(scrapeAnnotations(in), nil, proxy.PodAnnotations); a != nil {
		template.WithAnnotations(a)
	}

	depSpec := appsv1ac.DeploymentSpec().
		WithReplicas(ptr.Deref(proxy.Replicas, 1)).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(router.Name))).
		WithTemplate(template)
	if proxy.RevisionHistoryLimit != nil {
		depSpec.WithRevisionHistoryLimit(*proxy.RevisionHistoryLimit)
	}
	return appsv1ac.Deployment(Name(router), router.Namespace).
		WithLabels(SelectorLabels(router.Name)).
		WithOwnerReferences(ownerReference(router)).
		WithSpec(depSpec)
}

// args are the proxy container's arguments: the routing document, the router's name, the two listeners, the drain
// timings the Deployment's terminationGracePeriodSeconds allows for, and the client keys when set.
// cmd/router-proxy defines these flags; change both together.
func args(router string, proxy *inferencev1alpha1.ProxySpec) []string {
	a := []string{
		"--config=" + ConfigDir + "/" + ConfigKey,
		// The router label of every series the proxy exports comes from the proxy itself, so
		// alerts and dashboards tell routers apart under annotation scraping too.
		"--router-name=" + router,
		"--listen=:" + strconv.Itoa(int(Port)),
		"--metrics-listen=:" + strconv.Itoa(int(MetricsPort)),
		"--shutdown-delay=" + strconv.Itoa(ShutdownDelaySeconds) + "s",
		"--drain-timeout=" + strconv.Itoa(DrainSeconds) + "s",
	}
	if proxy.APIKeySecretRef != nil {
		a = append(a, "--api-keys-dir="+APIKeysDir)
	}
	return a
}

// ServicePort is the router's Service port.
func ServicePort(router *inferencev1alpha1.ModelRouter) int32 {
	if e := router.Spec.Endpoint; e != nil && e.Port != nil {
		return *e.Port
	}
	return DefaultServicePort
}

// Service exposes the proxy on spec.endpoint, selecting exactly the selector labels.
func Service(router *inferencev1alpha1.ModelRouter) *corev1ac.ServiceApplyConfiguration {
	svcType := corev1.ServiceTypeClusterIP
	if e := router.Spec.Endpoint; e != nil && e.Type != nil {
		svcType = corev1.ServiceType(*e.Type)
	}
	return corev1ac.Service(Name(router), router.Namespace).
		WithLabels(SelectorLabels(router.Name)).
		WithOwnerReferences(ownerReference(router)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(svcType).
			WithSelector(SelectorLabels(router.Name)).
			WithPorts(corev1ac.ServicePort().
				WithName(PortName).
				WithProtocol(corev1.ProtocolTCP).
				WithPort(ServicePort(router)).
				WithTargetPort(intstr.FromString(PortName))))
}

// Endpoint is the in-cluster URL of the router.
func Endpoint(router *inferencev1alpha1.ModelRouter) string {
	path := ""
	if e := router.Spec.Endpoint; e != nil {
		path = ptr.Deref(e.Path, "")
	}
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d%s", Name(router), router.Namespace, ServicePort(router), path)
}

// credentialsVolume projects the credentials Secret of every resolved external backend into a
// directory per backend; nil when there is none.
//
// Note: a volume, not envFrom, because the kubelet updates a mounted Secret in place and never a
// container's environment: the proxy rereads the files (--credentials-dir), so a rotated key
// needs no restart and cuts no stream. Only the three keys the proxy reads are projected (the
// rest of the Secret stays out of the pod), each optional, so a Secret without ORGANIZATION
// mounts, and a Secret deleted later does not keep a new pod from starting (its backend sends
// no key, and the proxy's log says so).
func credentialsVolume(res []Resolution) *corev1ac.VolumeApplyConfiguration {
	var sources []*corev1ac.VolumeProjectionApplyConfiguration
	for _, r := range res {
		ext := r.Backend.External
		if !r.Resolved || ext == nil || ext.CredentialsSecretRef == nil {
			continue
		}
		secret := corev1ac.SecretProjection().WithName(ext.CredentialsSecretRef.Name).WithOptional(true)
		for _, k := range []string{routingv1.CredentialsKey, routingv1.CredentialsOrganizationKey, routingv1.CredentialsProjectKey} {
			secret.WithItems(corev1ac.KeyToPath().WithKey(k).WithPath(r.Backend.Name + "/" + k))
		}
		sources = append(sources, corev1ac.VolumeProjection().WithSecret(secret))
	}
	if len(sources) == 0 {
		return nil
	}
	return corev1ac.Volume().WithName(credentialsVolumeName).WithProjected(corev1ac.ProjectedVolumeSource().WithSources(sources...))
}
