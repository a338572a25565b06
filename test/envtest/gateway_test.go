/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	inferencepoolv1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	inferencepoolv1ac "sigs.k8s.io/gateway-api-inference-extension/client-go/applyconfiguration/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// gatewayController is the controllerName the specs write parent statuses under, as a Gateway
// implementation would.
const gatewayController = "example.com/gateway-controller"

func withGateway(parents ...inferencev1alpha1.GatewayParentReference) func(*inferencev1alpha1.InferenceService) {
	return func(i *inferencev1alpha1.InferenceService) {
		i.Spec.Gateway = &inferencev1alpha1.GatewaySpec{ParentRefs: parents}
	}
}

func pool(ns, name string) *inferencepoolv1.InferencePool {
	p := &inferencepoolv1.InferencePool{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, p)).To(Succeed())
	return p
}

func route(ns, name string) *gatewayv1.HTTPRoute {
	r := &gatewayv1.HTTPRoute{}
	Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, r)).To(Succeed())
	return r
}

// gatewayReady waits until the InferenceService's GatewayReady condition matches and returns it.
func gatewayReady(ns, name string, status metav1.ConditionStatus, reason string) metav1.Condition {
	var out metav1.Condition
	eventually(ns, name, &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
		c := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Reason).To(Equal(reason), c.Message)
		g.Expect(c.ObservedGeneration).To(Equal(i.Generation))
		out = *c
	})
	return out
}

// parentConditions are the two conditions a Gateway writes per parent, for generation gen.
func parentConditions(gen int64, acceptedReason, resolvedReason string) []metav1.Condition {
	cond := func(t, reason, positive string) metav1.Condition {
		s := metav1.ConditionTrue
		if reason != positive {
			s = metav1.ConditionFalse
		}
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: "said by the test's gateway", ObservedGeneration: gen, LastTransitionTime: metav1.Now()}
	}
	return []metav1.Condition{cond("Accepted", acceptedReason, "Accepted"), cond("ResolvedRefs", resolvedReason, "ResolvedRefs")}
}

// reportOnRoute writes the route's status as the gateway controller would, for Gateway gw.
func reportOnRoute(ns, name, gw, accepted, resolved string) {
	Eventually(func() error {
		r := route(ns, name)
		r.Status.Parents = []gatewayv1.RouteParentStatus{{
			ParentRef:      gatewayv1.ParentReference{Name: gatewayv1.ObjectName(gw)},
			ControllerName: gatewayController,
			Conditions:     parentConditions(r.Generation, accepted, resolved),
		}}
		return k8sClient.Status().Update(suiteCtx, r)
	}).Should(Succeed())
}

// reportOnPool writes the pool's status as the gateway controller would, for Gateway gw.
func reportOnPool(ns, name, gw, accepted, resolved string) {
	Eventually(func() error {
		p := pool(ns, name)
		p.Status.Parents = []inferencepoolv1.ParentStatus{{
			ParentRef:      inferencepoolv1.ParentReference{Group: ptr.To(inferencepoolv1.Group(gatewayv1.GroupName)), Kind: "Gateway", Name: inferencepoolv1.ObjectName(gw)},
			ControllerName: gatewayController,
			Conditions:     parentConditions(p.Generation, accepted, resolved),
		}}
		return k8sClient.Status().Update(suiteCtx, p)
	}).Should(Succeed())
}

var _ = Describe("Gateway", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("applies the InferencePool and the HTTPRoute as asked, owned by the InferenceService, and writes nothing in steady state [G1]", func() {
		op := startOperator(ns, controllers.Config{})
		newISVC(ns, "llama", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Runtime = inferencev1alpha1.RuntimeVLLM
			i.Spec.Gateway = &inferencev1alpha1.GatewaySpec{
				ParentRefs: []inferencev1alpha1.GatewayParentReference{
					{Name: "inference-gateway"},
					{Name: "shared", Namespace: ptr.To("infra"), SectionName: ptr.To("https")},
				},
				EndpointPickerRef: &inferencev1alpha1.EndpointPickerRef{Name: "llama-epp", Port: inferencev1alpha1.EndpointPickerPort{Number: 9002}},
				ModelName:         ptr.To("meta-llama/Llama-3.1-8B-Instruct"),
				Hostnames:         []inferencev1alpha1.GatewayHostname{"models.example.com"},
			}
		})
		d := eventuallyDeployment(ns, "llama", func(g Gomega, d *appsv1.Deployment) {})
		isvc := &inferencev1alpha1.InferenceService{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "llama"}, isvc)).To(Succeed())

		By("the InferencePool selects exactly the Deployment's selector, on the runtime's port")
		p := eventually(ns, "llama", &inferencepoolv1.InferencePool{}, func(g Gomega, p *inferencepoolv1.InferencePool) {})
		matchLabels := map[string]string{}
		for k, v := range p.Spec.Selector.MatchLabels {
			matchLabels[string(k)] = string(v)
		}
		Expect(matchLabels).To(Equal(d.Spec.Selector.MatchLabels))
		Expect(d.Spec.Selector.MatchExpressions).To(BeEmpty())
		Expect(p.Spec.TargetPorts).To(Equal([]inferencepoolv1.Port{{Number: inferencepoolv1.PortNumber(d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort)}}))
		Expect(p.Spec.TargetPorts[0].Number).To(BeEquivalentTo(8000), "vLLM's port")
		Expect(p.Spec.EndpointPickerRef).NotTo(BeNil())
		Expect(p.Spec.EndpointPickerRef.Name).To(BeEquivalentTo("llama-epp"))
		Expect(p.Spec.EndpointPickerRef.Port).To(Equal(&inferencepoolv1.Port{Number: 9002}))
		Expect(p.Spec.EndpointPickerRef.FailureMode).To(Equal(inferencepoolv1.EndpointPickerFailClose), "the default")
		Expect(metav1.IsControlledBy(p, isvc)).To(BeTrue())

		By("the HTTPRoute attaches the pool to both Gateways for the model's header")
		r := eventually(ns, "llama", &gatewayv1.HTTPRoute{}, func(g Gomega, r *gatewayv1.HTTPRoute) {})
		Expect(metav1.IsControlledBy(r, isvc)).To(BeTrue())
		Expect(r.Spec.ParentRefs).To(HaveLen(2))
		Expect(r.Spec.ParentRefs[0].Name).To(BeEquivalentTo("inference-gateway"))
		Expect(r.Spec.ParentRefs[0].Namespace).To(BeNil())
		Expect(*r.Spec.ParentRefs[1].Namespace).To(BeEquivalentTo("infra"))
		Expect(*r.Spec.ParentRefs[1].SectionName).To(BeEquivalentTo("https"))
		Expect(r.Spec.Hostnames).To(Equal([]gatewayv1.Hostname{"models.example.com"}))
		Expect(r.Spec.Rules).To(HaveLen(1))
		Expect(r.Spec.Rules[0].BackendRefs).To(HaveLen(1))
		backend := r.Spec.Rules[0].BackendRefs[0]
		Expect(*backend.Group).To(BeEquivalentTo("inference.networking.k8s.io"))
		Expect(*backend.Kind).To(BeEquivalentTo("InferencePool"))
		Expect(backend.Name).To(BeEquivalentTo("llama"))
		Expect(r.Spec.Rules[0].Matches).To(HaveLen(1))
		Expect(r.Spec.Rules[0].Matches[0].Headers).To(Equal([]gatewayv1.HTTPHeaderMatch{{
			Type: ptr.To(gatewayv1.HeaderMatchExact), Name: "X-Gateway-Model-Name", Value: "meta-llama/Llama-3.1-8B-Instruct"}}))
		// A create is a POST, then the write that hands its Update entry to the Apply entry (O19):
		// a read between the two sees the Update entry for that moment.
		for _, obj := range []client.Object{&inferencepoolv1.InferencePool{}, &gatewayv1.HTTPRoute{}} {
			eventually(ns, "llama", obj, func(g Gomega, o client.Object) {
				for _, mf := range o.GetManagedFields() {
					g.Expect(mf.Manager).To(Equal("llmkube-operator"), "one field manager")
					g.Expect(mf.Operation).To(Equal(metav1.ManagedFieldsOperationApply))
				}
			})
		}
		gatewayReady(ns, "llama", metav1.ConditionUnknown, inferenceservice.ReasonGatewayPending)

		By("an unchanged spec writes nothing")
		before := reconciles(isvcController)
		settle(isvcController, before, 0)
		p, r = pool(ns, "llama"), route(ns, "llama")
		mark := op.mark()
		before = reconciles(isvcController)
		touch(ns, "llama")
		settle(isvcController, before, 1)
		Expect(op.requestsSince(mark)).To(BeEmpty(), "no write, and no read either: the pool and the route come from the cache")
		Expect(pool(ns, "llama").ResourceVersion).To(Equal(p.ResourceVersion))
		Expect(route(ns, "llama").ResourceVersion).To(Equal(r.ResourceVersion))

		By("another tool's label on the HTTPRoute stays, and costs no write")
		tracking := gatewayv1ac.HTTPRoute("llama", ns).WithLabels(map[string]string{"argocd.argoproj.io/instance": "models"})
		Expect(k8sClient.Apply(suiteCtx, tracking, client.FieldOwner("argocd-controller"))).To(Succeed())
		settle(isvcController, reconciles(isvcController), 0)
		mark = op.mark()
		before = reconciles(isvcController)
		touch(ns, "llama")
		settle(isvcController, before, 1)
		Expect(op.writes(mark)).To(BeEmpty())
		Expect(route(ns, "llama").Labels).To(HaveKeyWithValue("argocd.argoproj.io/instance", "models"))

		By("a spec change reaches the objects, and the other tool's label still stays")
		editISVC(ns, "llama", func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Gateway.ModelName = nil
			i.Spec.Gateway.EndpointPickerRef.FailureMode = inferencev1alpha1.EndpointPickerFailOpen
		})
		eventually(ns, "llama", &gatewayv1.HTTPRoute{}, func(g Gomega, r *gatewayv1.HTTPRoute) {
			g.Expect(r.Spec.Rules[0].Matches[0].Headers).To(BeEmpty())
			g.Expect(r.Labels).To(HaveKeyWithValue("argocd.argoproj.io/instance", "models"))
		})
		eventually(ns, "llama", &inferencepoolv1.InferencePool{}, func(g Gomega, p *inferencepoolv1.InferencePool) {
			g.Expect(p.Spec.EndpointPickerRef.FailureMode).To(Equal(inferencepoolv1.EndpointPickerFailOpen))
		})

		By("a person who forces another failure mode on the pool gets it taken back, with an OwnershipConflict Event naming the field and the manager")
		person := inferencepoolv1ac.InferencePool("llama", ns).WithSpec(inferencepoolv1ac.InferencePoolSpec().
			WithEndpointPickerRef(inferencepoolv1ac.EndpointPickerRef().WithFailureMode(inferencepoolv1.EndpointPickerFailClose)))
		Expect(k8sClient.Apply(suiteCtx, person, client.FieldOwner("person"), client.ForceOwnership)).To(Succeed())
		touch(ns, "llama")
		eventually(ns, "llama", &inferencepoolv1.InferencePool{}, func(g Gomega, p *inferencepoolv1.InferencePool) {
			g.Expect(p.Spec.EndpointPickerRef.FailureMode).To(Equal(inferencepoolv1.EndpointPickerFailOpen))
		})
		Eventually(func(g Gomega) {
			events := conflictEvents(ns)
			g.Expect(events).To(HaveLen(1))
			g.Expect(events[0].Note).To(ContainSubstring("failureMode"))
			g.Expect(events[0].Note).To(ContainSubstring("person"))
		}).Should(Succeed())

		By("removing spec.gateway deletes both, and GatewayReady leaves")
		editISVC(ns, "llama", func(i *inferencev1alpha1.InferenceService) { i.Spec.Gateway = nil })
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "llama"}, &inferencepoolv1.InferencePool{}))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "llama"}, &gatewayv1.HTTPRoute{}))).To(BeTrue())
		}).Should(Succeed())
		eventually(ns, "llama", &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
			g.Expect(meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)).To(BeNil())
		})
	})

	It("reports GatewayReady from what the Gateway writes into the HTTPRoute's and the InferencePool's parents [G2]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "m", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gw"}))
		c := gatewayReady(ns, "m", metav1.ConditionUnknown, inferenceservice.ReasonGatewayPending)
		Expect(c.Message).To(ContainSubstring("Gateway " + ns + "/gw"))

		By("the route accepted, the pool not reported on yet: still Unknown, waiting for the pool")
		reportOnRoute(ns, "m", "gw", "Accepted", "ResolvedRefs")
		Eventually(func(g Gomega) {
			i := &inferencev1alpha1.InferenceService{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, i)).To(Succeed())
			c := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
			g.Expect(c.Message).To(ContainSubstring("InferencePool " + ns + "/m"))
		}).Should(Succeed())

		By("both accepted and resolved: True")
		reportOnPool(ns, "m", "gw", "Accepted", "ResolvedRefs")
		c = gatewayReady(ns, "m", metav1.ConditionTrue, inferenceservice.ReasonGatewayAccepted)

		By("the Gateway refuses the pool: False with its reason, naming the Gateway and the pool")
		reportOnPool(ns, "m", "gw", "NotSupportedByParent", "ResolvedRefs")
		c = gatewayReady(ns, "m", metav1.ConditionFalse, "NotSupportedByParent")
		Expect(c.Message).To(ContainSubstring("Gateway " + ns + "/gw"))
		Expect(c.Message).To(ContainSubstring("InferencePool " + ns + "/m"))
		Expect(c.Message).To(ContainSubstring("said by the test's gateway"))

		By("the pool's endpoint picker does not resolve: False, InvalidExtensionRef")
		reportOnPool(ns, "m", "gw", "Accepted", "InvalidExtensionRef")
		c = gatewayReady(ns, "m", metav1.ConditionFalse, "InvalidExtensionRef")
		Expect(c.Message).To(ContainSubstring("ResolvedRefs=False"))

		By("the route refused by its listeners: False, naming the route")
		reportOnPool(ns, "m", "gw", "Accepted", "ResolvedRefs")
		reportOnRoute(ns, "m", "gw", "NotAllowedByListeners", "ResolvedRefs")
		c = gatewayReady(ns, "m", metav1.ConditionFalse, "NotAllowedByListeners")
		Expect(c.Message).To(ContainSubstring("HTTPRoute " + ns + "/m"))

		By("accepted again: True, and kubectl get -o wide shows it")
		reportOnRoute(ns, "m", "gw", "Accepted", "ResolvedRefs")
		gatewayReady(ns, "m", metav1.ConditionTrue, inferenceservice.ReasonGatewayAccepted)
		out, err := kubectl("", "get", "isvc", "m", "-n", ns, "-o", "wide")
		Expect(err).NotTo(HaveOccurred())
		lines := strings.Split(strings.TrimSpace(out), "\n")
		Expect(lines).To(HaveLen(2))
		col := strings.Index(lines[0], "GATEWAY")
		Expect(col).To(BeNumerically(">", 0), "a GATEWAY column")
		Expect(lines[1][col:]).To(HavePrefix("True "), "the column is aligned under its header")
	})

	It("deletes the pool and the route even when the status it reads has no GatewayReady yet [G3]", func() {
		startOperator(ns, controllers.Config{})
		newISVC(ns, "m", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gw"}))
		gatewayReady(ns, "m", metav1.ConditionUnknown, inferenceservice.ReasonGatewayPending)
		eventually(ns, "m", &gatewayv1.HTTPRoute{}, func(g Gomega, r *gatewayv1.HTTPRoute) {})

		By("the status loses GatewayReady (as a status read from a lagging cache would lack it), then spec.gateway goes")
		// A status-only change does not wake the operator, so the next reconcile is the spec's.
		Eventually(func(g Gomega) {
			i := &inferencev1alpha1.InferenceService{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, i)).To(Succeed())
			meta.RemoveStatusCondition(&i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)
			g.Expect(k8sClient.Status().Update(suiteCtx, i)).To(Succeed())
		}).Should(Succeed())
		editISVC(ns, "m", func(i *inferencev1alpha1.InferenceService) { i.Spec.Gateway = nil })
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, &inferencepoolv1.InferencePool{}))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, &gatewayv1.HTTPRoute{}))).To(BeTrue())
		}).Should(Succeed())
	})

	It("deletes the pool and the route of a spec.gateway removed while the operator was down [G3]", func() {
		first := startOperator(ns, controllers.Config{})
		newISVC(ns, "m", withGateway(inferencev1alpha1.GatewayParentReference{Name: "gw"}))
		gatewayReady(ns, "m", metav1.ConditionUnknown, inferenceservice.ReasonGatewayPending)
		eventually(ns, "m", &gatewayv1.HTTPRoute{}, func(g Gomega, r *gatewayv1.HTTPRoute) {})
		first.stop()

		editISVC(ns, "m", func(i *inferencev1alpha1.InferenceService) { i.Spec.Gateway = nil })
		// A new process has never looked the kinds up nor watched them: the GatewayReady condition
		// is what tells it that there is something to delete.
		startOperator(ns, controllers.Config{})
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, &inferencepoolv1.InferencePool{}))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "m"}, &gatewayv1.HTTPRoute{}))).To(BeTrue())
		}).Should(Succeed())
		eventually(ns, "m", &inferencev1alpha1.InferenceService{}, func(g Gomega, i *inferencev1alpha1.InferenceService) {
			g.Expect(meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)).To(BeNil())
		})
	})

	DescribeTable("admission rejects what it can see",
		func(gateway map[string]any, message string) {
			err := k8sClient.Create(suiteCtx, object("InferenceService", ns, isvcSpec(func(s map[string]any) { s["gateway"] = gateway })))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no parentRefs", map[string]any{"parentRefs": []any{}},
			"spec.gateway.parentRefs: Invalid value: 0: spec.gateway.parentRefs in body should have at least 1 items"),
		Entry("parentRefs left out", map[string]any{},
			"spec.gateway.parentRefs: Required value"),
		Entry("an endpoint picker port 0", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}},
			"endpointPickerRef": map[string]any{"name": "epp", "port": map[string]any{"number": 0}}},
			"spec.gateway.endpointPickerRef.port.number in body should be greater than or equal to 1"),
		Entry("an endpoint picker port 70000", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}},
			"endpointPickerRef": map[string]any{"name": "epp", "port": map[string]any{"number": 70000}}},
			"spec.gateway.endpointPickerRef.port.number in body should be less than or equal to 65535"),
		Entry("an unknown failure mode", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}},
			"endpointPickerRef": map[string]any{"name": "epp", "port": map[string]any{"number": 9002}, "failureMode": "FailSometimes"}},
			`spec.gateway.endpointPickerRef.failureMode: Unsupported value: "FailSometimes"`),
		Entry("the same Gateway twice", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}, map[string]any{"name": "gw"}}},
			"spec.gateway.parentRefs must not name the same Gateway listener twice"),
		Entry("the same Gateway with and without a listener", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}, map[string]any{"name": "gw", "sectionName": "https"}}},
			"when two references name the same Gateway, both must set sectionName"),
		Entry("a hostname with a port", map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "hostnames": []any{"models.example.com:443"}},
			"spec.gateway.hostnames[0] in body should match"),
	)
})

// errorCounter is a logr sink that counts error logs and writes everything to the test's output.
type errorCounter struct {
	logr.LogSink
	errors *atomic.Int64
}

func (e errorCounter) Error(err error, msg string, kv ...any) {
	e.errors.Add(1)
	e.LogSink.Error(err, msg, kv...)
}

func (e errorCounter) WithValues(kv ...any) logr.LogSink {
	return errorCounter{LogSink: e.LogSink.WithValues(kv...), errors: e.errors}
}

func (e errorCounter) WithName(name string) logr.LogSink {
	return errorCounter{LogSink: e.LogSink.WithName(name), errors: e.errors}
}

var _ = Describe("Gateway without its CRDs", func() {
	It("reports CRDNotInstalled, converges the rest without an error log, and creates the objects once the CRDs are installed, without a restart [G4]", func() {
		// A control plane of its own: the suite's has the Gateway API CRDs installed.
		own, err := testenv.New()
		Expect(err).NotTo(HaveOccurred())
		ownCfg, err := own.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(own.Stop()).To(Succeed()) })
		c, err := client.New(ownCfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		const ns = "default"

		errs := &atomic.Int64{}
		logger := logr.New(errorCounter{LogSink: zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)).GetSink(), errors: errs})
		const recheck = 300 * time.Millisecond
		op := startOperatorWith(operatorOptions{restConfig: ownCfg, namespaces: []string{ns}, logger: &logger,
			cfg: controllers.Config{GatewayCRDRecheck: recheck}})
		isvc := &inferencev1alpha1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"},
			Spec: inferencev1alpha1.InferenceServiceSpec{Model: inferencev1alpha1.ModelSpec{Source: "org/model"},
				Gateway: &inferencev1alpha1.GatewaySpec{ParentRefs: []inferencev1alpha1.GatewayParentReference{{Name: "gw"}}}}}
		Expect(c.Create(suiteCtx, isvc)).To(Succeed())
		// More InferenceServices waiting for the CRDs: the lookups must not grow with them.
		for i := range 4 {
			other := isvc.DeepCopy()
			other.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("waiting-%d", i)}
			Expect(c.Create(suiteCtx, other)).To(Succeed())
		}

		By("GatewayReady=False, CRDNotInstalled, naming both kinds; the Deployment, Service and status converge")
		key := types.NamespacedName{Namespace: ns, Name: "m"}
		Eventually(func(g Gomega) {
			i := &inferencev1alpha1.InferenceService{}
			g.Expect(c.Get(suiteCtx, key, i)).To(Succeed())
			gr := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)
			g.Expect(gr).NotTo(BeNil())
			g.Expect(gr.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(gr.Reason).To(Equal(inferenceservice.ReasonCRDNotInstalled))
			g.Expect(gr.Message).To(ContainSubstring("InferencePool.inference.networking.k8s.io"))
			g.Expect(gr.Message).To(ContainSubstring("HTTPRoute.gateway.networking.k8s.io"))
			g.Expect(meta.IsStatusConditionFalse(i.Status.Conditions, inferencev1alpha1.ConditionDegraded)).To(BeTrue())
			g.Expect(i.Status.ObservedGeneration).To(Equal(i.Generation))
			g.Expect(c.Get(suiteCtx, key, &appsv1.Deployment{})).To(Succeed())
		}).WithTimeout(20 * time.Second).Should(Succeed())
		// Several recheck periods: each looks for the CRDs again, none logs an error, and the
		// lookups are paced by the recheck period, not by the reconciles.
		mark := op.mark()
		before := reconciles(isvcController)
		time.Sleep(6 * recheck)
		var lookups []string
		for _, r := range op.requestsSince(mark) {
			if strings.HasPrefix(r, "GET /api") && !strings.Contains(r, "/namespaces/") {
				lookups = append(lookups, r)
			}
		}
		GinkgoWriter.Printf("in %s: %v reconciles, discovery requests %q\n", 6*recheck, reconciles(isvcController)-before, lookups)
		Expect(len(lookups)).To(BeNumerically("<=", 2*(6+1)), "at most one lookup per kind per recheck period, however many InferenceServices wait")
		Expect(errs.Load()).To(BeZero(), "no error log while the CRDs are missing")
		Expect(op.done).NotTo(BeClosed(), "the operator keeps running")

		By("the CRDs are installed: the objects appear without a restart")
		files, err := testenv.GatewayCRDs()
		Expect(err).NotTo(HaveOccurred())
		_, err = envtest.InstallCRDs(ownCfg, envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true, Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(suiteCtx, key, &inferencepoolv1.InferencePool{})).To(Succeed())
			g.Expect(c.Get(suiteCtx, key, &gatewayv1.HTTPRoute{})).To(Succeed())
			i := &inferencev1alpha1.InferenceService{}
			g.Expect(c.Get(suiteCtx, key, i)).To(Succeed())
			g.Expect(meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady).Reason).To(Equal(inferenceservice.ReasonGatewayPending))
		}).WithTimeout(30 * time.Second).Should(Succeed())

		By("the operator watches them now: a parent's answer reaches GatewayReady")
		Eventually(func() error {
			r := &gatewayv1.HTTPRoute{}
			if err := c.Get(suiteCtx, key, r); err != nil {
				return err
			}
			r.Status.Parents = []gatewayv1.RouteParentStatus{{ParentRef: gatewayv1.ParentReference{Name: "gw"}, ControllerName: gatewayController,
				Conditions: parentConditions(r.Generation, "NotAllowedByListeners", "ResolvedRefs")}}
			return c.Status().Update(suiteCtx, r)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			i := &inferencev1alpha1.InferenceService{}
			g.Expect(c.Get(suiteCtx, key, i)).To(Succeed())
			g.Expect(meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady).Reason).To(Equal("NotAllowedByListeners"))
		}).Should(Succeed())
		Expect(errs.Load()).To(BeZero())

		By("the HTTPRoute CRD is deleted after its watch started: CRDNotInstalled again, no error log")
		crdScheme := testenv.Scheme()
		Expect(apiextensionsv1.AddToScheme(crdScheme)).To(Succeed())
		crds, err := client.New(ownCfg, client.Options{Scheme: crdScheme})
		Expect(err).NotTo(HaveOccurred())
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "httproutes.gateway.networking.k8s.io"}}
		Expect(crds.Delete(suiteCtx, crd)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(crds.Get(suiteCtx, client.ObjectKeyFromObject(crd), crd)) }).
			WithTimeout(30 * time.Second).Should(BeTrue())
		Eventually(func(g Gomega) {
			edit := &inferencev1alpha1.InferenceService{}
			g.Expect(c.Get(suiteCtx, key, edit)).To(Succeed())
			edit.Spec.Gateway.Hostnames = []inferencev1alpha1.GatewayHostname{"after.example.com"}
			g.Expect(c.Update(suiteCtx, edit)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			i := &inferencev1alpha1.InferenceService{}
			g.Expect(c.Get(suiteCtx, key, i)).To(Succeed())
			gr := meta.FindStatusCondition(i.Status.Conditions, inferencev1alpha1.ConditionGatewayReady)
			g.Expect(gr.Reason).To(Equal(inferenceservice.ReasonCRDNotInstalled), gr.Message)
			g.Expect(gr.Message).To(ContainSubstring("HTTPRoute.gateway.networking.k8s.io"))
			g.Expect(gr.ObservedGeneration).To(Equal(i.Generation))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		time.Sleep(4 * recheck)
		Expect(errs.Load()).To(BeZero(), "no error log for a kind that went away")
	})
})
