/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/modelrouter"
)

// limitsCondition is the router's LimitsShared condition as the API server has it (nil: none).
func limitsCondition(g Gomega, ns string) *metav1.Condition {
	r := &inferencev1alpha1.ModelRouter{}
	g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "mr"}, r)).To(Succeed())
	return meta.FindStatusCondition(r.Status.Conditions, modelrouter.ConditionLimitsShared)
}

// expectLimitsCondition expects the router's LimitsShared condition with status, reason and a
// message holding every one of says.
func expectLimitsCondition(g Gomega, ns string, status metav1.ConditionStatus, reason string, says ...string) {
	c := limitsCondition(g, ns)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(status))
	g.Expect(c.Reason).To(Equal(reason))
	for _, m := range says {
		g.Expect(c.Message).To(ContainSubstring(m))
	}
}

var _ = Describe("Client limits, the operator's side", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("writes the clients into the routing document and says in the status whether the replicas share the limits or multiply them [L8, L1]", func() {
		startOperator(ns, controllers.Config{})
		limitedRouter(ns, "http://cloud.example", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Proxy.Replicas = ptr.To(int32(3))
			r.Spec.Clients[0].Limits.RequestsPerMinute = ptr.To(int64(60))
			r.Spec.Clients[0].Limits.TokensPerDay = ptr.To(int64(1000000))
		})
		cm := eventuallyConfigMap(ns, "mr-router-proxy", func(Gomega, *corev1.ConfigMap) {})
		doc, err := routingv1.Parse([]byte(cm.Data[modelrouter.ConfigKey]))
		Expect(err).NotTo(HaveOccurred())
		Expect(doc.Clients).To(Equal([]routingv1.Client{
			{Name: "team-a", SecretKeys: []string{"team-a"}, Limits: &routingv1.Limits{RequestsPerMinute: 60, TokensPerDay: 1000000}},
			{Name: "team-b", SecretKeys: []string{"team-b"}, Models: []string{"gpt-4o-mini", "llama-*"}},
		}))
		Expect(doc.Limits).To(Equal(&routingv1.LimitsStore{KeyPrefix: "llmkube/" + ns + "/mr"}))
		Eventually(func(g Gomega) {
			expectLimitsCondition(g, ns, metav1.ConditionFalse, modelrouter.ReasonLimitsPerReplica,
				"each of the 3 proxy replicas enforces every limit alone, so up to 3 times each limit passes")
		}).Should(Succeed())

		By("a Redis with a password: shared, the password's one key mounted and passed to the proxy")
		editRouter(ns, "mr", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Limits = &inferencev1alpha1.LimitsSpec{Redis: &inferencev1alpha1.RedisSpec{Address: "redis.cache:6379",
				PasswordSecretRef: &inferencev1alpha1.SecretKeySelector{Name: "redis-auth", Key: "pw"}}}
		})
		Eventually(func(g Gomega) {
			expectLimitsCondition(g, ns, metav1.ConditionTrue, modelrouter.ReasonLimitsShared, "Redis redis.cache:6379", "fail-open")
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "mr-router-proxy"}, d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--redis-password-file=/etc/router-proxy-redis/password"))
			i := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "redis-password" })
			g.Expect(i).To(BeNumerically(">=", 0))
			g.Expect(d.Spec.Template.Spec.Volumes[i].Secret.Items).To(Equal([]corev1.KeyToPath{{Key: "pw", Path: "password"}}))
		}).Should(Succeed())

		By("no limits left: no condition")
		editRouter(ns, "mr", func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Limits = nil
			r.Spec.Clients[0].Limits = nil
		})
		Eventually(func(g Gomega) { g.Expect(limitsCondition(g, ns)).To(BeNil()) }).Should(Succeed())
	})

	DescribeTable("refuses clients and limits that cannot work, naming the field [L9]",
		func(mutate func(map[string]any), message string) {
			err := k8sClient.Create(suiteCtx, object("ModelRouter", ns, routerSpec(mutate)))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("clients without client keys", func(s map[string]any) {
			s["clients"] = []any{map[string]any{"name": "a", "secretKeys": []any{"a"}}}
		}, "spec.clients needs spec.proxy.apiKeySecretRef"),
		Entry("a key in two clients", func(s map[string]any) {
			s["proxy"] = map[string]any{"apiKeySecretRef": map[string]any{"name": "keys"}}
			s["clients"] = []any{map[string]any{"name": "a", "secretKeys": []any{"k"}}, map[string]any{"name": "b", "secretKeys": []any{"k"}}}
		}, "spec.clients[].secretKeys: a key of the Secret belongs to at most one client"),
		Entry("a limit of 0", func(s map[string]any) {
			s["proxy"] = map[string]any{"apiKeySecretRef": map[string]any{"name": "keys"}}
			s["clients"] = []any{map[string]any{"name": "a", "secretKeys": []any{"k"}, "limits": map[string]any{"requestsPerMinute": 0}}}
		}, "spec.clients[0].limits.requestsPerMinute: Invalid value: 0: spec.clients[0].limits.requestsPerMinute in body should be greater than or equal to 1"),
		Entry("a client name that is no DNS label", func(s map[string]any) {
			s["proxy"] = map[string]any{"apiKeySecretRef": map[string]any{"name": "keys"}}
			s["clients"] = []any{map[string]any{"name": "Team A", "secretKeys": []any{"k"}}}
		}, "spec.clients[0].name in body should match"),
		Entry("a Redis timeout of 10s", func(s map[string]any) {
			s["limits"] = map[string]any{"redis": map[string]any{"address": "r:6379", "timeout": "10s"}}
		}, "spec.limits.redis.timeout must be a positive duration of at most 5s"),
		Entry("a Redis address without a port", func(s map[string]any) {
			s["limits"] = map[string]any{"redis": map[string]any{"address": "redis.cache"}}
		}, "spec.limits.redis.address in body should match"),
		Entry("an unknown failure mode", func(s map[string]any) {
			s["limits"] = map[string]any{"failureMode": "Sometimes"}
		}, `spec.limits.failureMode: Unsupported value: "Sometimes"`),
	)
})
