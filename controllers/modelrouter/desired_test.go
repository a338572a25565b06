/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/version"
)

func router(mutate func(*inferencev1alpha1.ModelRouter)) *inferencev1alpha1.ModelRouter {
	r := &inferencev1alpha1.ModelRouter{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", UID: "uid-1", Generation: 3},
		Spec: inferencev1alpha1.ModelRouterSpec{
			Backends: []inferencev1alpha1.Backend{
				{Name: "local", InferenceServiceRef: &inferencev1alpha1.LocalObjectReference{Name: "llama"}},
				{Name: "cloud", External: &inferencev1alpha1.ExternalBackend{
					Provider: "openai", URL: "https://api.example.com/v1", Model: ptr.To("gpt"),
					CredentialsSecretRef: &inferencev1alpha1.LocalObjectReference{Name: "openai-key"},
				}},
			},
			Rules: []inferencev1alpha1.RoutingRule{
				{Name: "z-first", Models: []string{"llama-b", "llama-a"}, Backend: "local"},
				{Name: "a-second", Models: []string{"gpt-*"}, Backend: "cloud"},
			},
			DefaultRoute: ptr.To("local"),
		},
	}
	if mutate != nil {
		mutate(r)
	}
	return r
}

func allFound() Lookup {
	return Lookup{
		InferenceServices: map[string]*inferencev1alpha1.InferenceService{"llama": {
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "llama"},
			Spec:       inferencev1alpha1.InferenceServiceSpec{Runtime: "vllm"},
		}},
		Secrets: map[string]bool{"openai-key": true},
	}
}

func TestResolve(t *testing.T) {
	res := Resolve(router(nil), allFound())
	if len(res) != 2 || !res[0].Resolved || !res[1].Resolved {
		t.Fatalf("want both resolved, got %+v", res)
	}
	if res[0].URL != "http://llama.ns.svc.cluster.local:8000" {
		t.Fatalf("InferenceService URL from its resolved port: %s", res[0].URL)
	}
	if res[1].URL != "https://api.example.com/v1" {
		t.Fatalf("external URL kept: %s", res[1].URL)
	}

	// LLMKube's schema defaults spec.endpoint.path to /v1/chat/completions: the proxy appends each
	// request's path to the backend URL, so the URL must not carry it (it would double).
	found := allFound()
	found.InferenceServices["llama"].Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Path: ptr.To("/v1/chat/completions")}
	if res := Resolve(router(nil), found); res[0].URL != "http://llama.ns.svc.cluster.local:8000" {
		t.Fatalf("InferenceService URL without spec.endpoint.path: %s", res[0].URL)
	}

	res = Resolve(router(nil), Lookup{})
	if res[0].Resolved || !strings.Contains(res[0].Message, `InferenceService "llama" not found`) {
		t.Fatalf("missing InferenceService: %+v", res[0])
	}
	if res[1].Resolved || !strings.Contains(res[1].Message, `Secret "openai-key" not found`) {
		t.Fatalf("missing Secret: %+v", res[1])
	}
}

func TestConfigDataIsStableAndSorted(t *testing.T) {
	r := router(nil)
	a, err := ConfigData(r, Resolve(r, allFound()))
	if err != nil {
		t.Fatal(err)
	}
	// The same spec with its backends listed in another order gives the same bytes.
	r2 := router(func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Backends[0], r.Spec.Backends[1] = r.Spec.Backends[1], r.Spec.Backends[0]
	})
	b, err := ConfigData(r2, Resolve(r2, allFound()))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Fatalf("config depends on backend order (-a +b):\n%s", d)
	}
	want := `{"version":"llmkube.dev/routing/v1","backends":[` +
		`{"name":"cloud","kind":"external","url":"https://api.example.com/v1","provider":"openai","model":"gpt","credentials":true,"streamUsage":true},` +
		`{"name":"local","kind":"inferenceService","url":"http://llama.ns.svc.cluster.local:8000","service":{"namespace":"ns","name":"llama","port":"http"},"streamUsage":true}],` +
		`"rules":[{"name":"z-first","models":["llama-a","llama-b"],"backend":"local"},{"name":"a-second","models":["gpt-*"],"backend":"cloud"}],` +
		`"defaultRoute":"local"}`
	if a[ConfigKey] != want {
		t.Fatalf("config:\n got %s\nwant %s", a[ConfigKey], want)
	}
	// What the operator writes is what the proxy reads.
	if _, err := routingv1.Parse([]byte(a[ConfigKey])); err != nil {
		t.Fatalf("the proxy's parser refuses the operator's document: %v", err)
	}
}

func TestUnresolvedBackendLeavesConfigAndCredentials(t *testing.T) {
	r := router(nil)
	found := allFound()
	found.Secrets = nil
	res := Resolve(r, found)
	data, err := ConfigData(r, res)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := routingv1.Parse([]byte(data[ConfigKey]))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Backends) != 1 || cfg.Backends[0].Name != "local" {
		t.Fatalf("only the resolved backend is configured: %+v", cfg.Backends)
	}
	d := Deployment(r, Inputs{Resolutions: res})
	if v := d.Spec.Template.Spec.Volumes; len(v) != 2 {
		t.Fatalf("a missing Secret must not be mounted: %+v", v)
	}
	all := Resolve(r, allFound())
	d = Deployment(r, Inputs{Resolutions: all})
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.EnvFrom) != 0 {
		t.Fatalf("credentials by envFrom are never reread: %+v", c.EnvFrom)
	}
	v := d.Spec.Template.Spec.Volumes[2]
	src := v.Projected.Sources
	if *v.Name != credentialsVolumeName || len(src) != 1 || *src[0].Secret.Name != "openai-key" || !*src[0].Secret.Optional ||
		len(src[0].Secret.Items) != 3 || *src[0].Secret.Items[0].Key != "API_KEY" || *src[0].Secret.Items[0].Path != "cloud/API_KEY" {
		t.Fatalf("credentials volume: %+v", v)
	}
	m := c.VolumeMounts[len(c.VolumeMounts)-1]
	if *m.Name != credentialsVolumeName || *m.MountPath != CredentialsDir || !*m.ReadOnly || c.Args[len(c.Args)-1] != "--credentials-dir="+CredentialsDir {
		t.Fatalf("credentials mount %+v, args %v", m, c.Args)
	}
}

// A routing change reaches the proxy through its mounted document, which it rereads: the pod
// template stays as it is, so no proxy pod rolls and no stream is cut.
func TestRoutingChangeLeavesThePodTemplate(t *testing.T) {
	r := router(nil)
	baseRes := Resolve(r, allFound())
	base, _ := ConfigData(r, baseRes)
	found := allFound()
	found.InferenceServices["llama"].Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](9000)}
	movedRes := Resolve(r, found)
	moved, _ := ConfigData(r, movedRes)
	if base[ConfigKey] == moved[ConfigKey] {
		t.Fatal("an InferenceService's port change must change the routing document")
	}
	if diff := cmp.Diff(Deployment(r, Inputs{Resolutions: baseRes}).Spec.Template, Deployment(r, Inputs{Resolutions: movedRes}).Spec.Template); diff != "" {
		t.Fatalf("the pod template changed with the routing (-before +after):\n%s", diff)
	}
}

func TestDeploymentPodMetadata(t *testing.T) {
	r := router(func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Proxy = &inferencev1alpha1.ProxySpec{
			PodLabels: map[string]inferencev1alpha1.LabelValue{"team": "a"},
			PodAnnotations: map[string]string{
				AnnotationScrapePort: "1234",
			},
		}
	})
	d := Deployment(r, Inputs{EmitScrapeAnnotations: true})
	tmpl := d.Spec.Template
	wantLabels := map[string]string{"app": "r-router-proxy", "inference.llmkube.dev/model-router": "r", "team": "a"}
	if diff := cmp.Diff(wantLabels, tmpl.Labels); diff != "" {
		t.Fatalf("labels (-want +got):\n%s", diff)
	}
	wantAnn := map[string]string{
		AnnotationScrape: "true", AnnotationScrapePath: "/metrics", AnnotationScrapePort: "1234",
	}
	if diff := cmp.Diff(wantAnn, tmpl.Annotations); diff != "" {
		t.Fatalf("annotations: scrape hints the user's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(SelectorLabels("r"), d.Spec.Selector.MatchLabels); diff != "" {
		t.Fatalf("selector:\n%s", diff)
	}
	if _, ok := Deployment(r, Inputs{}).Spec.Template.Annotations[AnnotationScrape]; ok {
		t.Fatal("no scrape hint with emission off")
	}
}

func TestDeploymentDefaultsAndSecurity(t *testing.T) {
	d := Deployment(router(nil), Inputs{Image: "example.com/proxy:1"})
	if *d.Name != "r-router-proxy" || *d.Spec.Replicas != 1 || d.Spec.RevisionHistoryLimit != nil {
		t.Fatalf("name/replicas/revisionHistoryLimit: %s %d %v", *d.Name, *d.Spec.Replicas, d.Spec.RevisionHistoryLimit)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if *c.Image != "example.com/proxy:1" {
		t.Fatalf("image %s", *c.Image)
	}
	if q := (*c.Resources.Requests)[corev1.ResourceCPU]; q.String() != "100m" {
		t.Fatalf("cpu %s", q.String())
	}
	if q := (*c.Resources.Requests)[corev1.ResourceMemory]; q.String() != "256Mi" {
		t.Fatalf("memory %s", q.String())
	}
	if len(c.Env) != 1 || *c.Env[0].Name != "GOMEMLIMIT" || *c.Env[0].ValueFrom.ResourceFieldRef.Resource != "limits.memory" || *c.Env[0].ValueFrom.ResourceFieldRef.ContainerName != ContainerName {
		t.Fatalf("GOMEMLIMIT from the container's memory limit: %+v", c.Env)
	}
	sc := c.SecurityContext
	if !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities.Drop[0] != "ALL" || *sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("restricted security context: %+v", sc)
	}
	if *c.Ports[0].Name != "http" || *c.Ports[0].ContainerPort != 8080 || *c.Ports[1].Name != "metrics" || *c.Ports[1].ContainerPort != 9090 {
		t.Fatalf("ports %+v", c.Ports)
	}
	if v := d.Spec.Template.Spec.Volumes[0]; *v.ConfigMap.Name != "r-router-proxy" {
		t.Fatalf("config volume %+v", v)
	}
	spec := d.Spec.Template.Spec
	if spec.NodeSelector != nil || spec.ImagePullSecrets != nil {
		t.Fatal("no empty nodeSelector or imagePullSecrets in the apply")
	}

	d = Deployment(router(func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Proxy = &inferencev1alpha1.ProxySpec{
			Replicas: ptr.To[int32](3), Image: ptr.To("example.com/proxy:1"), RevisionHistoryLimit: ptr.To[int32](2),
			NodeSelector:     map[string]string{"pool": "cpu"},
			ImagePullSecrets: []inferencev1alpha1.LocalObjectReference{{Name: "pull"}},
		}
	}), Inputs{})
	if *d.Spec.Replicas != 3 || *d.Spec.RevisionHistoryLimit != 2 || *d.Spec.Template.Spec.Containers[0].Image != "example.com/proxy:1" ||
		d.Spec.Template.Spec.NodeSelector["pool"] != "cpu" || *d.Spec.Template.Spec.ImagePullSecrets[0].Name != "pull" {
		t.Fatalf("proxy spec not applied: %+v", d.Spec)
	}
}

func TestDeploymentRunsTheProxy(t *testing.T) {
	d := Deployment(router(nil), Inputs{Image: DefaultImage()})
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if strings.HasSuffix(*c.Image, ":latest") || *c.Image != "ghcr.io/llmkube/router-proxy:"+version.Version {
		t.Fatalf("default image must be the operator's version, never :latest: %s", *c.Image)
	}
	wantArgs := []string{"--config=/etc/router-proxy/config.json", "--router-name=r", "--listen=:8080", "--metrics-listen=:9090", "--shutdown-delay=5s", "--drain-timeout=30s"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Fatalf("args (-want +got):\n%s", diff)
	}
	if p := c.ReadinessProbe.HTTPGet; p == nil || *p.Path != "/readyz" || p.Port.StrVal != "http" {
		t.Fatalf("readiness probe %+v", c.ReadinessProbe)
	}
	if p := c.LivenessProbe.HTTPGet; p == nil || *p.Path != "/healthz" || p.Port.StrVal != "http" {
		t.Fatalf("liveness probe %+v", c.LivenessProbe)
	}
	if g := *spec.TerminationGracePeriodSeconds; g <= ShutdownDelaySeconds+DrainSeconds {
		t.Fatalf("terminationGracePeriodSeconds %d must exceed the proxy's shutdown delay and drain", g)
	}
	if len(spec.Volumes) != 2 || len(c.VolumeMounts) != 2 {
		t.Fatalf("no key volume without apiKeySecretRef: %+v", spec.Volumes)
	}

	d = Deployment(router(func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Proxy = &inferencev1alpha1.ProxySpec{APIKeySecretRef: &inferencev1alpha1.LocalObjectReference{Name: "client-keys"}}
	}), Inputs{Image: DefaultImage()})
	spec = d.Spec.Template.Spec
	c = spec.Containers[0]
	if v := spec.Volumes[2]; *v.Name != "api-keys" || *v.Secret.SecretName != "client-keys" {
		t.Fatalf("client keys are a Secret volume: %+v", v)
	}
	if m := c.VolumeMounts[2]; *m.MountPath != APIKeysDir || !*m.ReadOnly {
		t.Fatalf("mount %+v", m)
	}
	if a := c.Args[len(c.Args)-1]; a != "--api-keys-dir="+APIKeysDir {
		t.Fatalf("args %v", c.Args)
	}
	for _, e := range c.Env {
		if strings.Contains(*e.Name, "KEY") {
			t.Fatalf("client keys are never env (a rotation would need a restart): %+v", e)
		}
	}
}

func TestServiceAndEndpoint(t *testing.T) {
	r := router(nil)
	s := Service(r)
	if diff := cmp.Diff(SelectorLabels("r"), s.Spec.Selector); diff != "" {
		t.Fatalf("selector:\n%s", diff)
	}
	if *s.Spec.Ports[0].Port != DefaultServicePort || s.Spec.Ports[0].TargetPort.StrVal != "http" {
		t.Fatalf("ports %+v", s.Spec.Ports)
	}
	r.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To[int32](80), Path: ptr.To("/v1")}
	if e := Endpoint(r); e != "http://r-router-proxy.ns.svc.cluster.local:80/v1" {
		t.Fatalf("endpoint %s", e)
	}
}

func TestStatus(t *testing.T) {
	r := router(nil)
	found := allFound()
	delete(found.InferenceServices, "llama")
	st := Status(r, nil, Resolve(r, found), nil).Status
	if len(st.Backends) != 2 || *st.Backends[0].Resolved || st.Backends[0].URL != nil || *st.Backends[1].Resolved != true {
		t.Fatalf("backends %+v", st.Backends)
	}
	var conds []metav1.Condition
	for _, c := range st.Conditions {
		conds = append(conds, metav1.Condition{Type: *c.Type, Status: *c.Status, Message: *c.Message})
	}
	c := meta.FindStatusCondition(conds, inferencev1alpha1.ConditionResolvedRefs)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, `backend "local"`) {
		t.Fatalf("ResolvedRefs names the backend: %+v", c)
	}
	if d := meta.FindStatusCondition(conds, inferencev1alpha1.ConditionDegraded); d == nil || d.Status != metav1.ConditionFalse {
		t.Fatalf("Degraded: %+v", d)
	}
	st = Status(r, nil, Resolve(r, allFound()), []error{errors.New("boom")}).Status
	for _, c := range st.Conditions {
		if *c.Type == inferencev1alpha1.ConditionDegraded && (*c.Status != metav1.ConditionTrue || *c.Message != "boom") {
			t.Fatalf("Degraded quotes the error: %+v", c)
		}
		if *c.Type == inferencev1alpha1.ConditionResolvedRefs && *c.Status != metav1.ConditionTrue {
			t.Fatalf("ResolvedRefs: %+v", c)
		}
	}
}
