/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/test/envtest/testenv"
	"github.com/llmkube/operator/test/helmtool"
)

// installPolicies renders the chart's admission policies with values scoped to namespace ns and
// creates them; they are deleted when the spec ends.
func installPolicies(ns string) {
	values := filepath.Join(GinkgoT().TempDir(), "values.yaml")
	Expect(os.WriteFile(values, []byte(`admissionPolicies:
  enabled: true
  allowedRegistries: [ghcr.io/llmkube/, registry.example.com/]
  maxCacheSize: 200Gi
  denyExposedEndpoints: true
  denyTolerateAll: true
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: `+ns+`}
`), 0o600)).To(Succeed())
	objs, err := helmtool.Template("llmkube-system", "-f", values)
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, o := range objs {
		if !strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			continue
		}
		Expect(k8sClient.Create(suiteCtx, o)).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(suiteCtx, o) })
		n++
	}
	Expect(n).To(Equal(16), "eight policies and their bindings")
}

// asUser is a client acting as user name, bound in ns to a Role with rules.
func asUser(ns, name string, rules ...rbacv1.PolicyRule) client.Client {
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	Expect(k8sClient.Create(suiteCtx, role)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: name}},
	})).To(Succeed())
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: name}
	c, err := client.New(as, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

var createOnly = rbacv1.PolicyRule{APIGroups: []string{inferencev1alpha1.GroupVersion.Group},
	Resources: []string{"inferenceservices", "models", "modelrouters"}, Verbs: []string{"create", "get"}}

var _ = Describe("Admission policies a platform team opts into (chart admissionPolicies)", func() {
	It("refuses each rule with its message for a user who may only create InferenceServices, and passes an allowed one [F13]", func() {
		ns := newNamespace()
		installPolicies(ns)
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-password"},
			StringData: map[string]string{"password": "s3cret"}})).To(Succeed())
		Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hf-token"},
			StringData: map[string]string{"HF_TOKEN": "hf_x"}})).To(Succeed())
		alice := asUser(ns, "alice", createOnly,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"hf-token"}, Verbs: []string{"get"}})

		isvc := func(name string, mutate func(*inferencev1alpha1.InferenceService)) *inferencev1alpha1.InferenceService {
			i := &inferencev1alpha1.InferenceService{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: inferencev1alpha1.InferenceServiceSpec{
					Model: inferencev1alpha1.ModelSpec{Source: "hf://org/repo/model.gguf"}, Replicas: ptr.To[int32](1),
				},
			}
			if mutate != nil {
				mutate(i)
			}
			return i
		}
		router := func(name string, mutate func(*inferencev1alpha1.ModelRouter)) *inferencev1alpha1.ModelRouter {
			r := &inferencev1alpha1.ModelRouter{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       inferencev1alpha1.ModelRouterSpec{Backends: []inferencev1alpha1.Backend{externalBackend("cloud", "")}},
			}
			mutate(r)
			return r
		}
		refused := map[string]struct {
			obj  client.Object
			want string
		}{
			"a foreign registry": {isvc("exfil", func(i *inferencev1alpha1.InferenceService) { i.Spec.Image = ptr.To("attacker.example.com/exfil") }),
				"spec.image attacker.example.com/exfil is not from an allowed registry"},
			"a privileged container": {isvc("priv", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			}), "spec.securityContext.privileged"},
			"an added capability": {isvc("cap", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
			}), "spec.securityContext.capabilities.add"},
			"a Secret the user may not read": {isvc("env", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Env = []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}, Key: "password"}}}}
			}), "spec.env[].valueFrom.secretKeyRef names Secret db-password: one of them is not a Secret you may read (get)"},
			"a cache over the maximum": {isvc("big", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("100Ti"))}
			}), "spec.modelCache.size 100Ti is over 200Gi"},
			"a Model whose token the user may not read": {&inferencev1alpha1.Model{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gated"},
				Spec: inferencev1alpha1.ModelKindSpec{Source: "org/gated", Format: inferencev1alpha1.ModelFormatSafetensors,
					SourceSecretRef: &inferencev1alpha1.SecretKeyReference{Name: "db-password"}},
			}, "spec.sourceSecretRef names Secret db-password: one of them is not a Secret you may read (get)"},
			// [I49] a ModelRouter's Secrets: its proxy sends them to addresses the writer chose.
			"a router backend's credentials the user may not read [I49]": {router("cloud", func(r *inferencev1alpha1.ModelRouter) {
				r.Spec.Backends[0].External.CredentialsSecretRef = &inferencev1alpha1.LocalObjectReference{Name: "db-password"}
			}), "spec.backends[].external.credentialsSecretRef names Secret db-password: one of them is not a Secret you may read (get)"},
			"a router's API keys the user may not read [I49]": {router("keys", func(r *inferencev1alpha1.ModelRouter) {
				r.Spec.Proxy = &inferencev1alpha1.ProxySpec{APIKeySecretRef: &inferencev1alpha1.LocalObjectReference{Name: "db-password"}}
			}), "spec.proxy.apiKeySecretRef names Secret db-password"},
			"a router's pull Secret the user may not read [I49]": {router("pull", func(r *inferencev1alpha1.ModelRouter) {
				r.Spec.Proxy = &inferencev1alpha1.ProxySpec{ImagePullSecrets: []inferencev1alpha1.LocalObjectReference{{Name: "db-password"}}}
			}), "spec.proxy.imagePullSecrets names Secret db-password"},
			"a Redis password the user may not read [I49]": {router("redis", func(r *inferencev1alpha1.ModelRouter) {
				r.Spec.Limits = &inferencev1alpha1.LimitsSpec{Redis: &inferencev1alpha1.RedisSpec{Address: "redis.example:6379",
					PasswordSecretRef: &inferencev1alpha1.SecretKeySelector{Name: "db-password", Key: "password"}}}
			}), "spec.limits.redis.passwordSecretRef names Secret db-password"},
			"a mounted Secret volume the user may not read [I49]": {isvc("vol", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ExtraVolumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-password"}}}}
			}), "spec.extraVolumes[].secret.secretName names Secret db-password"},
			"a vLLM token the user may not read [I49]": {isvc("tok", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Runtime = inferencev1alpha1.RuntimeVLLM
				i.Spec.VLLMConfig = &inferencev1alpha1.VLLMConfig{HFTokenSecretRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}, Key: "password"}}
			}), "spec.vllmConfig.hfTokenSecretRef names Secret db-password"},
			"another team's claim as the cache [I49]": {isvc("claim", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{ClaimName: ptr.To("finance-data")}
			}), "spec.modelCache.claimName names PersistentVolumeClaim finance-data: one of them is not one you may read (get)"},
			"another team's claim as a volume [I49]": {isvc("pvc", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ExtraVolumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "finance-data"}}}}
			}), "spec.extraVolumes[].persistentVolumeClaim.claimName names PersistentVolumeClaim finance-data"},
			"another team's ConfigMap [I49]": {isvc("cm", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Env = []corev1.EnvVar{{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "finance-config"}, Key: "k"}}}}
			}), "spec.env[].valueFrom.configMapKeyRef names configmaps finance-config"},
			"a projected token of the pods' ServiceAccount [I49]": {isvc("token", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ExtraVolumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "vault", Path: "token"}}}}}}}
			}), "spec.extraVolumes[].projected.sources[].serviceAccountToken asks for a token of the pods' ServiceAccount (default)"},
			"a LoadBalancer endpoint [I49]": {isvc("lb", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Type: ptr.To(inferencev1alpha1.ServiceType("LoadBalancer"))}
			}), "spec.endpoint.type LoadBalancer publishes the model outside the cluster"},
			"a toleration of every taint [I49]": {isvc("tol", func(i *inferencev1alpha1.InferenceService) {
				i.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			}), "spec.tolerations: a toleration without a key tolerates every taint"},
		}
		// [I49] the Pod Security Standards' baseline, one control per row.
		for control, c := range map[string]struct {
			mutate func(*inferencev1alpha1.InferenceService)
			want   string
		}{
			"HostPath Volumes": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ExtraVolumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
			}, "spec.extraVolumes[].hostPath"},
			"Seccomp (container)": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
			}, "(Pod Security baseline: Seccomp)"},
			"Seccomp (pod)": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodSecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
			}, "(Pod Security baseline: Seccomp)"},
			"AppArmor": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
			}, "(Pod Security baseline: AppArmor)"},
			"/proc Mount Type": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.SecurityContext = &corev1.SecurityContext{ProcMount: ptr.To(corev1.UnmaskedProcMount)}
			}, "(Pod Security baseline: /proc Mount Type)"},
			"SELinux": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodSecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}}
			}, "(Pod Security baseline: SELinux)"},
			"Host Probes": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.ProbeOverrides = &inferencev1alpha1.ProbeOverrides{Liveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Host: "169.254.169.254", Path: "/latest/meta-data/", Port: intstr.FromInt32(80)}}}}
			}, "(Pod Security baseline: Host Probes)"},
			"Sysctls": {func(i *inferencev1alpha1.InferenceService) {
				i.Spec.PodSecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}}
			}, "(Pod Security baseline: Sysctls)"},
		} {
			refused["Pod Security baseline: "+control+" [I49]"] = struct {
				obj  client.Object
				want string
			}{isvc(strings.ToLower(strings.NewReplacer(" ", "-", "(", "", ")", "", "/", "").Replace(control)), c.mutate), c.want}
		}
		for what, c := range refused {
			By("refused: " + what)
			Eventually(func(g Gomega) {
				err := alice.Create(suiteCtx, c.obj.DeepCopyObject().(client.Object))
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).To(ContainSubstring(c.want))
			}).Should(Succeed())
		}

		By("allowed: a router whose credentials the user may read, a safe sysctl, a keyed toleration")
		Expect(alice.Create(suiteCtx, router("open", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends[0].External.CredentialsSecretRef = &inferencev1alpha1.LocalObjectReference{Name: "hf-token"}
		}))).To(Succeed())
		Expect(alice.Create(suiteCtx, isvc("safe", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.PodSecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.tcp_keepalive_time", Value: "60"}},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
			i.Spec.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}
			i.Spec.ProbeOverrides = &inferencev1alpha1.ProbeOverrides{Readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(8080)}}}}
		}))).To(Succeed())

		By("allowed: an image of an allowed registry, the Secret the user may read, a cache within the maximum")
		Expect(alice.Create(suiteCtx, isvc("ok", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Image = ptr.To("ghcr.io/llmkube/llama.cpp:server")
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Size: ptr.To(resource.MustParse("100Gi"))}
			i.Spec.Env = []corev1.EnvVar{{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "hf-token"}, Key: "HF_TOKEN"}}}}
		}))).To(Succeed())
		Expect(alice.Create(suiteCtx, &inferencev1alpha1.Model{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "open"},
			Spec: inferencev1alpha1.ModelKindSpec{Source: "org/open", Format: inferencev1alpha1.ModelFormatSafetensors,
				SourceSecretRef: &inferencev1alpha1.SecretKeyReference{Name: "hf-token"}},
		})).To(Succeed())

		By("another namespace is not bound: the rules stay where the platform put them")
		other := newNamespace()
		Expect(k8sClient.Create(suiteCtx, isvc("exfil", func(i *inferencev1alpha1.InferenceService) {
			i.Namespace = other
			i.Spec.Image = ptr.To("attacker.example.com/exfil")
		}))).To(Succeed())
	})
})
