/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/ownership"
)

// Pod behaviours.
const (
	podOK = iota
	podFail
	podHold
)

// fakePod stands in for one pod of an InferenceService: an OpenAI-compatible server on
// 127.0.0.1 whose EndpointSlice address is ip (TEST-NET-1), which the proxy's test address map
// dials on loopback, same port. It records the X-Test-Seq of every request it got.
type fakePod struct {
	name    string
	ip      string
	port    int32
	srv     *http.Server
	mode    atomic.Int32
	release chan struct{}
	held    atomic.Int32
	// delay holds a non-streaming answer that long (a long generation); gap separates a
	// stream's chunks.
	delay, gap atomic.Int64
	mu         sync.Mutex
	seqs       []int64
	// metrics, when set, answers GET /metrics (routerproxy_engine_test.go: an engine's gauges).
	metrics atomic.Pointer[http.HandlerFunc]
}

func newFakePod(name, ip string) *fakePod {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	f := &fakePod{name: name, ip: ip, port: int32(ln.Addr().(*net.TCPAddr).Port), release: make(chan struct{})}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	DeferCleanup(func() { f.unhold(); _ = f.srv.Close() })
	return f
}

func (f *fakePod) serve(w http.ResponseWriter, r *http.Request) {
	if h := f.metrics.Load(); h != nil && r.URL.Path == "/metrics" {
		(*h)(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(body, &req)
	seq, _ := strconv.ParseInt(r.Header.Get("X-Test-Seq"), 10, 64)
	f.mu.Lock()
	f.seqs = append(f.seqs, seq)
	f.mu.Unlock()
	if req.Stream {
		f.stream(w, r, req.Model, req.StreamOptions.IncludeUsage)
		return
	}
	if d := time.Duration(f.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	switch f.mode.Load() {
	case podFail:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"broken pod","type":"server_error","param":null,"code":null}}`)
		return
	case podHold:
		f.held.Add(1)
		select {
		case <-f.release:
		case <-r.Context().Done():
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, req.Model, f.name)
}

// stream sends five chunks gap apart, the usage-only chunk when asked, then [DONE].
func (f *fakePod) stream(w http.ResponseWriter, r *http.Request, model string, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i := range 5 {
		if i > 0 {
			select {
			case <-time.After(time.Duration(f.gap.Load())):
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "data: {\"id\":\"s1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d\"},\"finish_reason\":null}]}\n\n", model, i)
		_ = rc.Flush()
	}
	if includeUsage {
		fmt.Fprintf(w, "data: {\"id\":\"s1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":5,\"total_tokens\":6}}\n\n", model)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

func (f *fakePod) unhold() {
	select {
	case <-f.release:
	default:
		close(f.release)
	}
}

// got is how many requests reached the pod; after is how many of them carried a sequence number
// above seq.
func (f *fakePod) got() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seqs)
}

func (f *fakePod) after(seq int64) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for _, s := range f.seqs {
		if s > seq {
			out = append(out, s)
		}
	}
	return out
}

// podSlice puts f behind service as the EndpointSlice controller would: one slice per pod (each
// stand-in listens on its own port), port named http.
func podSlice(ns, service string, f *fakePod, ready bool) {
	Expect(k8sClient.Create(suiteCtx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: service + "-" + f.name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{f.ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(f.port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	})).To(Succeed())
}

func setPodReady(ns, service string, f *fakePod, ready bool) {
	edit(ns, service+"-"+f.name, &discoveryv1.EndpointSlice{}, func(s *discoveryv1.EndpointSlice) {
		s.Endpoints[0].Conditions.Ready = ptr.To(ready)
	})
}

func removePodSlice(ns, service string, f *fakePod) {
	Expect(k8sClient.Delete(suiteCtx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: service + "-" + f.name}})).To(Succeed())
}

// serviceAccountKubeconfig is a kubeconfig that authenticates as the ServiceAccount sa of ns with
// a token from the TokenRequest API, as the kubelet would project one into the pod.
func serviceAccountKubeconfig(ns, sa string) (string, *rest.Config) {
	cs := kubernetes.NewForConfigOrDie(cfg)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(suiteCtx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: sa, Namespace: ns}
	kc.CurrentContext = "test"
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())
	return path, &rest.Config{Host: cfg.Host, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, BearerToken: tr.Status.Token}
}

// chatAs sends one chat completion through the proxy with the official client and returns the
// pod (or fallback) that answered; seq goes in X-Test-Seq.
func chatAs(p *proxyProcess, seq int64, messages []openaiMessage, header ...string) (string, error) {
	opts := []option.RequestOption{option.WithHeader("X-Test-Seq", strconv.FormatInt(seq, 10))}
	for i := 0; i+1 < len(header); i += 2 {
		opts = append(opts, option.WithHeader(header[i], header[i+1]))
	}
	var msgs []openai.ChatCompletionMessageParamUnion
	for _, m := range messages {
		switch m.role {
		case "system":
			msgs = append(msgs, openai.SystemMessage(m.content))
		case "assistant":
			msgs = append(msgs, openai.AssistantMessage(m.content))
		default:
			msgs = append(msgs, openai.UserMessage(m.content))
		}
	}
	c := openaiClient(p, "", opts...)
	resp, err := c.Chat.Completions.New(suiteCtx, openai.ChatCompletionNewParams{Model: "llama-3", Messages: msgs})
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", errors.New("no choices")
	}
	return resp.Choices[0].Message.Content, nil
}

type openaiMessage struct{ role, content string }

func hello(s string) []openaiMessage { return []openaiMessage{{"user", s}} }

// balancedRouter runs the operator on an InferenceService llama and a router r whose every model
// goes to it, and returns the ServiceAccount the operator's Deployment gives the proxy.
func balancedRouter(ns string, mutate func(*inferencev1alpha1.ModelRouter), isvcMutate ...func(*inferencev1alpha1.InferenceService)) string {
	startOperator(ns, controllers.Config{})
	newISVC(ns, "llama", func(i *inferencev1alpha1.InferenceService) {
		for _, m := range isvcMutate {
			m(i)
		}
	})
	newRouter(ns, "r", func(r *inferencev1alpha1.ModelRouter) {
		r.Spec.Backends = []inferencev1alpha1.Backend{isvcBackend("local", "llama")}
		r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("all", "local", []string{"*"})}
		if mutate != nil {
			mutate(r)
		}
	})
	routerReady(ns, "r", "local")
	sa := deployment(ns, "r-router-proxy").Spec.Template.Spec.ServiceAccountName
	Expect(sa).To(Equal("r-router-proxy"))
	return sa
}

// startBalancingProxy runs the proxy binary as the Deployment says, authenticated by kubeconfig,
// with the test address map (TEST-NET-1 and the Service's name dialled on loopback).
func startBalancingProxy(ns, kubeconfig string, extra ...string) *proxyProcess {
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--test-address-map=192.0.2.0/24=127.0.0.1,llama." + ns + ".svc.cluster.local=127.0.0.1",
		"--endpoints-sync-timeout=10s",
	}, extra...)
	return runProxyAsDeployed(ns, "r-router-proxy", args...)
}

func podsMetric(p *proxyProcess) float64 {
	return p.metric(`llmkube_router_backend_pods{backend="local"}`)
}

var _ = Describe("Router proxy balancing over InferenceService pods", func() {
	It("runs as its own ServiceAccount that reads only EndpointSlices of its namespace, and sends to the less busy pod [R11]", func() {
		ns := newNamespace()
		sa := balancedRouter(ns, nil)

		By("the operator applied the ServiceAccount, Role and RoleBinding with its field manager, owned by the router")
		for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "r-router-proxy"}, obj)).To(Succeed())
				g.Expect(obj.GetOwnerReferences()).To(ConsistOf(HaveField("Name", "r")))
				g.Expect(obj.GetOwnerReferences()[0].Controller).To(HaveValue(BeTrue()))
				g.Expect(obj.GetManagedFields()).To(ContainElement(And(
					HaveField("Manager", ownership.DefaultFieldManager), HaveField("Operation", metav1.ManagedFieldsOperationApply))))
			}).Should(Succeed())
		}

		kubeconfig, saCfg := serviceAccountKubeconfig(ns, sa)
		By("the ServiceAccount reads EndpointSlices of its namespace and nothing else")
		cs := kubernetes.NewForConfigOrDie(saCfg)
		_, err := cs.DiscoveryV1().EndpointSlices(ns).List(suiteCtx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = cs.CoreV1().Secrets(ns).List(suiteCtx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "secrets: %v", err)
		_, err = cs.CoreV1().Pods(ns).List(suiteCtx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "pods: %v", err)
		_, err = cs.CoreV1().ConfigMaps(ns).Get(suiteCtx, "r-router-proxy", metav1.GetOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "configmaps: %v", err)
		_, err = cs.DiscoveryV1().EndpointSlices("default").List(suiteCtx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "endpointslices of another namespace: %v", err)
		err = cs.DiscoveryV1().EndpointSlices(ns).Delete(suiteCtx, "anything", metav1.DeleteOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "deleting endpointslices: %v", err)

		pods := []*fakePod{newFakePod("a", "192.0.2.11"), newFakePod("b", "192.0.2.12"), newFakePod("c", "192.0.2.13")}
		for _, f := range pods {
			podSlice(ns, "llama", f, true)
		}
		p := startBalancingProxy(ns, kubeconfig)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(3.0))

		By("requests spread over the three pods")
		seen := map[string]int{}
		for i := range 30 {
			who, err := chatAs(p, int64(i), hello("hi"))
			Expect(err).NotTo(HaveOccurred())
			seen[who]++
		}
		Expect(seen).To(HaveLen(3), "%v", seen)

		By("a pod holding a request gets no other while the others are idle")
		a := pods[0]
		a.mode.Store(podHold)
		var heldDone sync.WaitGroup
		for i := 0; a.held.Load() == 0; i++ {
			Expect(i).To(BeNumerically("<", 50), "no request reached pod a")
			heldDone.Add(1)
			go func() {
				defer heldDone.Done()
				defer GinkgoRecover()
				_, err := chatAs(p, 1000, hello("held"))
				Expect(err).NotTo(HaveOccurred())
			}()
			time.Sleep(50 * time.Millisecond)
		}
		before := a.got()
		for i := range 40 {
			who, err := chatAs(p, int64(2000+i), hello("hi"))
			Expect(err).NotTo(HaveOccurred())
			Expect(who).NotTo(Equal("a"))
		}
		Expect(a.got()).To(Equal(before), "pod a, busy with one request, got more while b and c were idle")
		a.unhold()
		heldDone.Wait()

		By("metrics are by backend, never by pod")
		resp, err := http.Get("http://" + p.metrics + "/metrics")
		Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		Expect(string(body)).NotTo(ContainSubstring("192.0.2."))
		Expect(string(body)).To(ContainSubstring(`llmkube_router_backend_pods{backend="local",router="r"} 3`))
	})

	It("ejects a pod that fails in a row, and retries on another pod before the rule's fallback backend [R12]", func() {
		ns := newNamespace()
		spare := newFakeOpenAI("spare", upstreamOK)
		sa := balancedRouter(ns, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Backends = append(r.Spec.Backends, externalAt("spare", "openai-compatible", spare.URL+"/v1", ""))
			r.Spec.Rules = []inferencev1alpha1.RoutingRule{rule("all", "local", []string{"*"}, "spare")}
		})
		routerReady(ns, "r", "local", "spare")
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		pods := []*fakePod{newFakePod("a", "192.0.2.21"), newFakePod("b", "192.0.2.22"), newFakePod("c", "192.0.2.23")}
		for _, f := range pods {
			podSlice(ns, "llama", f, true)
		}
		pods[0].mode.Store(podFail)
		p := startBalancingProxy(ns, kubeconfig, "--failure-threshold=3", "--cooldown=10m")
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(3.0))

		By("every request is answered by a healthy pod; the broken one is tried three times, then ejected")
		for i := range 40 {
			who, err := chatAs(p, int64(i), hello("hi"))
			Expect(err).NotTo(HaveOccurred())
			Expect(who).To(BeElementOf("b", "c"))
		}
		Expect(pods[0].got()).To(Equal(3), "the failing pod is ejected after 3 failures in a row")
		Expect(spare.requests()).To(BeEmpty(), "no request went to the fallback backend while a pod could answer")
		Expect(p.metric(`llmkube_router_pod_ejections_total{backend="local"}`)).To(Equal(1.0))
		Expect(p.metric(`llmkube_router_pod_retries_total{backend="local"}`)).To(Equal(3.0))

		By("when every pod fails, the rule's fallback backend answers")
		pods[1].mode.Store(podFail)
		pods[2].mode.Store(podFail)
		who, err := chatAs(p, 100, hello("hi"))
		Expect(err).NotTo(HaveOccurred())
		Expect(who).To(Equal("hello from spare"))
		Expect(spare.requests()).To(HaveLen(1))
	})

	It("sends conversations sharing a system prompt to the pod that has it, keeps a conversation on its pod turn after turn whatever its JSON spelling, pins a session by x-session-id, and spreads different prompts [R13]", func() {
		ns := newNamespace()
		sa := balancedRouter(ns, func(r *inferencev1alpha1.ModelRouter) {
			r.Spec.Proxy = &inferencev1alpha1.ProxySpec{Balancing: ptr.To(inferencev1alpha1.BalancingPrefixAffinity)}
		})
		eventuallyConfigMap(ns, "r-router-proxy", func(g Gomega, cm *corev1.ConfigMap) {
			g.Expect(cm.Data["config.json"]).To(ContainSubstring(`"balancing":"PrefixAffinity"`))
		})
		routerReady(ns, "r", "local")
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		for i, name := range []string{"a", "b", "c", "d"} {
			podSlice(ns, "llama", newFakePod(name, fmt.Sprintf("192.0.2.%d", 31+i)), true)
		}
		p := startBalancingProxy(ns, kubeconfig)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(4.0))

		// conversation is a system prompt, then turns of (user, assistant) and a last question.
		conversation := func(system, user string, turns int) []openaiMessage {
			conv := []openaiMessage{{"system", system}, {"user", user}}
			for t := range turns {
				conv = append(conv, openaiMessage{"assistant", fmt.Sprintf("Answer %d to %s, in a few sentences of text.", t, user)},
					openaiMessage{"user", fmt.Sprintf("Follow-up question %d of %s, long enough to fill a block or two.", t, user)})
			}
			return conv
		}
		homes := map[string]bool{}
		for s := range 8 {
			// System prompts of about 3 KB, longer than the 4 KB the former key stopped at once
			// the JSON's quoting is added: 20 blocks of 128 bytes or more.
			system := fmt.Sprintf("You are assistant number %d. ", s) + strings.Repeat(fmt.Sprintf("Rule %d: answer briefly and cite sources. ", s), 70)
			home, err := chatAs(p, int64(s*100), conversation(system, "alice", 0))
			Expect(err).NotTo(HaveOccurred())
			homes[home] = true
			for turn := range 5 {
				for _, user := range []string{"alice", "bob"} {
					who, err := chatAs(p, int64(s*100+turn*2+1), conversation(system, user, turn))
					Expect(err).NotTo(HaveOccurred())
					Expect(who).To(Equal(home), "system prompt %d: %s's turn %d went to %s, not to %s where the system prompt and the conversation are", s, user, turn, who, home)
				}
			}
		}
		Expect(len(homes)).To(BeNumerically(">=", 2), "8 different system prompts all went to %v", homes)
		Expect(p.metric(`llmkube_router_prefix_blocks_total{backend="local",result="hit"}`)).To(BeNumerically(">", 0))
		Expect(p.metric(`llmkube_router_prefix_blocks_total{backend="local",result="miss"}`)).To(BeNumerically(">", 0))

		By("the same conversation with its JSON keys reordered and reindented goes to the same pod")
		system := "You are a translator. " + strings.Repeat("Translate faithfully, keep names and numbers. ", 20)
		home, err := chatAs(p, 900, conversation(system, "carol", 1))
		Expect(err).NotTo(HaveOccurred())
		for i := range 5 {
			body := fmt.Sprintf("{\n  \"messages\": [\n    {\"content\": %q, \"role\": \"system\"},\n    {\"content\": \"carol\", \"role\": \"user\"},"+
				"\n    {\"content\": \"Answer 0 to carol, in a few sentences of text.\", \"role\": \"assistant\"},"+
				"\n    {\"role\": \"user\", \"content\": \"Follow-up question 0 of carol, long enough to fill a block or two.\"},"+
				"\n    {\"role\": \"assistant\", \"content\": \"ok\"}, {\"role\": \"user\", \"content\": \"and then %d?\"}\n  ],\n  \"model\": \"llama-3\"\n}", system, i)
			resp, err := http.Post(p.url("/v1/chat/completions"), "application/json", strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			var out struct {
				Choices []struct {
					Message struct{ Content string } `json:"message"`
				} `json:"choices"`
			}
			Expect(json.NewDecoder(resp.Body).Decode(&out)).To(Succeed())
			_ = resp.Body.Close()
			Expect(out.Choices).NotTo(BeEmpty())
			Expect(out.Choices[0].Message.Content).To(Equal(home), "the conversation respelled went elsewhere")
		}

		By("x-session-id pins requests whatever their prompt")
		seen := map[string]int{}
		for i := range 10 {
			who, err := chatAs(p, int64(100+i), hello(fmt.Sprintf("unrelated prompt %d", i)), "X-Session-Id", "session-42")
			Expect(err).NotTo(HaveOccurred())
			seen[who]++
		}
		Expect(seen).To(HaveLen(1), "one session went to %v", seen)
	})

	It("keeps every request while endpoints appear, go unready and vanish, and sends none to an endpoint after the watch reported it gone [R14]", func() {
		ns := newNamespace()
		sa := balancedRouter(ns, nil)
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		a, b, c := newFakePod("a", "192.0.2.41"), newFakePod("b", "192.0.2.42"), newFakePod("c", "192.0.2.43")
		for _, f := range []*fakePod{a, b, c} {
			podSlice(ns, "llama", f, true)
		}
		p := startBalancingProxy(ns, kubeconfig, "--cooldown=10m")
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(3.0))

		var (
			seq, done atomic.Int64
			mu        sync.Mutex
			failures  []string
			wg        sync.WaitGroup
		)
		stop := make(chan struct{})
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					n := seq.Add(1)
					if _, err := chatAs(p, n, hello("x")); err != nil {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("request %d: %v", n, err))
						mu.Unlock()
					}
					done.Add(1)
				}
			}()
		}
		stopTraffic := sync.OnceFunc(func() { close(stop); wg.Wait() })
		DeferCleanup(stopTraffic)
		more := func(n int64) {
			target := done.Load() + n
			Eventually(func() int64 { return done.Load() }).Should(BeNumerically(">=", target))
		}
		more(50)

		By("a new endpoint appears and gets requests")
		d := newFakePod("d", "192.0.2.44")
		podSlice(ns, "llama", d, true)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(4.0))
		Eventually(d.got).Should(BeNumerically(">", 0))

		By("an endpoint goes unready: once the watch reported it, it gets nothing")
		setPodReady(ns, "llama", a, false)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(3.0))
		mark := seq.Load()
		more(100)
		Expect(a.after(mark)).To(BeEmpty(), "requests started after the watch reported pod a unready")

		By("an endpoint's process dies before its slice goes: the requests it fails are retried on another pod")
		Expect(b.srv.Close()).To(Succeed())
		more(100)
		Expect(p.metric(`llmkube_router_pod_retries_total{backend="local"}`)).To(BeNumerically(">", 0))
		removePodSlice(ns, "llama", b)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(2.0))

		By("an endpoint removed while its process still runs gets nothing once the watch reported it")
		removePodSlice(ns, "llama", c)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(1.0))
		mark = seq.Load()
		more(100)
		Expect(c.after(mark)).To(BeEmpty(), "requests started after the watch reported pod c removed")

		stopTraffic()
		mu.Lock()
		defer mu.Unlock()
		Expect(failures).To(BeEmpty(), "requests lost although another pod could answer")
		GinkgoWriter.Printf("churn: %d requests, pods a=%d b=%d c=%d d=%d\n", done.Load(), a.got(), b.got(), c.got(), d.got())
	})

	It("sends to the Service URL without permission or without endpoints, and says so once in the log and a metric [R15]", func() {
		ns := newNamespace()
		service := newFakePod("service", "")
		sa := balancedRouter(ns, nil, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.Endpoint = &inferencev1alpha1.EndpointSpec{Port: ptr.To(service.port)}
		})
		a := newFakePod("a", "192.0.2.51")
		podSlice(ns, "llama", a, true)

		By("a ServiceAccount without the Role: forbidden, so the Service URL")
		Expect(k8sClient.Create(suiteCtx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nobody"}})).To(Succeed())
		nobody, _ := serviceAccountKubeconfig(ns, "nobody")
		p := startBalancingProxy(ns, nobody, "--endpoints-sync-timeout=2s")
		for i := range 10 {
			who, err := chatAs(p, int64(i), hello("hi"))
			Expect(err).NotTo(HaveOccurred())
			Expect(who).To(Equal("service"))
		}
		Expect(p.metric(`llmkube_router_backend_service_fallback{backend="local",reason="forbidden"}`)).To(Equal(1.0))
		Expect(fallbackLogs(p)).To(ConsistOf(HaveKeyWithValue("reason", "forbidden")), "said once, however often the watch is refused")
		p.kill()

		By("the operator's ServiceAccount, but no ready endpoint: the Service URL until one is ready")
		setPodReady(ns, "llama", a, false)
		kubeconfig, _ := serviceAccountKubeconfig(ns, sa)
		p = startBalancingProxy(ns, kubeconfig)
		who, err := chatAs(p, 20, hello("hi"))
		Expect(err).NotTo(HaveOccurred())
		Expect(who).To(Equal("service"))
		Expect(p.metric(`llmkube_router_backend_service_fallback{backend="local",reason="no_ready_endpoints"}`)).To(Equal(1.0))
		Expect(fallbackLogs(p)).To(ConsistOf(HaveKeyWithValue("reason", "no_ready_endpoints")))
		setPodReady(ns, "llama", a, true)
		Eventually(func() float64 { return podsMetric(p) }).Should(Equal(1.0))
		who, err = chatAs(p, 21, hello("hi"))
		Expect(err).NotTo(HaveOccurred())
		Expect(who).To(Equal("a"))
		Expect(p.metric(`llmkube_router_backend_service_fallback{backend="local",reason="no_ready_endpoints"}`)).To(Equal(-1.0))
	})
})

// fallbackLogs are the proxy's log lines saying a backend sends to its Service URL.
func fallbackLogs(p *proxyProcess) []map[string]any {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	var out []map[string]any
	for _, l := range p.logs {
		if l["msg"] == "backend sends to its Service URL: the proxy cannot choose a pod" {
			out = append(out, l)
		}
	}
	return out
}
