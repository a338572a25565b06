/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package envtest_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers"
	"github.com/llmkube/operator/controllers/inferenceservice"
	"github.com/llmkube/operator/controllers/model"
	"github.com/llmkube/operator/controllers/rollout"
)

// llmkubePair is a Model and an InferenceService written as LLMKube's GPU sample writes them
// (config/samples/gpu-llama-3b-model.yaml in defilantech/LLMKube), without the three fields this
// operator rejects (hardware.gpu.memory, hardware.gpu.layers, resources.gpuMemory; the admission
// spec below shows them rejected by name).
func llmkubePair(ns string) string {
	return fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: Model
metadata:
  name: llama-3b-gpu
  namespace: %[1]s
  labels:
    model: llama-3.2
spec:
  source: https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q8_0.gguf
  format: gguf
  quantization: Q8_0
  hardware:
    accelerator: cuda
    gpu:
      enabled: true
      count: 1
      vendor: nvidia
  resources:
    cpu: "2"
    memory: "4Gi"
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: llama-3b-gpu-service
  namespace: %[1]s
spec:
  modelRef: llama-3b-gpu
  replicas: 1
  image: ghcr.io/ggml-org/llama.cpp:server-cuda
  endpoint:
    port: 8080
    path: /v1/chat/completions
    type: ClusterIP
  resources:
    gpu: 1
    cpu: "2"
    memory: "4Gi"
`, ns)
}

func newModel(ns, name string, mutate func(*inferencev1alpha1.Model)) {
	m := &inferencev1alpha1.Model{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       inferencev1alpha1.ModelKindSpec{Source: "Qwen/Qwen2.5-0.5B-Instruct", Format: inferencev1alpha1.ModelFormatSafetensors},
	}
	if mutate != nil {
		mutate(m)
	}
	Expect(k8sClient.Create(suiteCtx, m)).To(Succeed())
}

func refISVC(ns, name, model string, runtime inferencev1alpha1.Runtime, mutate func(*inferencev1alpha1.InferenceService)) {
	newISVC(ns, name, func(i *inferencev1alpha1.InferenceService) {
		i.Spec.Model = inferencev1alpha1.ModelSpec{}
		i.Spec.ModelRef = model
		i.Spec.Runtime = runtime
		if mutate != nil {
			mutate(i)
		}
	})
}

func envOf(d *appsv1.Deployment) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		out[e.Name] = e
	}
	return out
}

// cacheClaimOf is the claim the Deployment's model-cache volume names.
func cacheClaimOf(d *appsv1.Deployment) string {
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == inferenceservice.CacheVolumeName && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

func modelResolvedOf(g Gomega, ns, name string) *metav1.Condition {
	isvc := &inferencev1alpha1.InferenceService{}
	g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: name}, isvc)).To(Succeed())
	c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionModelResolved)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.ObservedGeneration).To(Equal(isvc.Generation))
	return c
}

var _ = Describe("Model and spec.modelRef", func() {
	var (
		ns string
		op *operator
	)
	BeforeEach(func() {
		ns = newNamespace()
		op = startOperator(ns, controllers.Config{})
	})

	It("writes a new Model's status once when an InferenceService naming it follows within model.Settle [M10]", func() {
		mark := op.mark()
		newModel(ns, "later", nil)
		// Half a second, well inside model.Settle (2 s): the time a GitOps tool takes between two
		// documents of one sync.
		time.Sleep(500 * time.Millisecond)
		refISVC(ns, "uses-later", "later", inferencev1alpha1.RuntimeVLLM, nil)
		Eventually(func(g Gomega) {
			m := &inferencev1alpha1.Model{}
			g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "later"}, m)).To(Succeed())
			g.Expect(m.Status.InferenceServices).To(Equal(int32(1)))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		time.Sleep(time.Second)
		statusWrites := 0
		for _, w := range op.writes(mark) {
			if strings.HasSuffix(w, "/models/later/status") {
				statusWrites++
			}
		}
		Expect(statusWrites).To(Equal(1), "the Model's status writes: %v", op.writes(mark))
	})

	It("converges an LLMKube Model and InferenceService applied with kubectl apply --server-side [M1]", func() {
		_, err := applyAs("gitops", llmkubePair(ns))
		Expect(err).NotTo(HaveOccurred())

		By("the Model is Accepted at its generation, used by the InferenceService, and not Ready: no pod has loaded it")
		eventually(ns, "llama-3b-gpu", &inferencev1alpha1.Model{}, func(g Gomega, m *inferencev1alpha1.Model) {
			g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
			g.Expect(meta.IsStatusConditionTrue(m.Status.Conditions, inferencev1alpha1.ConditionAccepted)).To(BeTrue())
			g.Expect(m.Status.UsedBy).To(Equal([]string{"llama-3b-gpu-service"}))
			g.Expect(m.Status.Phase).To(Equal(inferencev1alpha1.PhasePending))
			g.Expect(meta.FindStatusCondition(m.Status.Conditions, inferencev1alpha1.ConditionReady)).To(HaveField("Reason", model.ReasonLoading))
		})

		By("the InferenceService resolves it and its Deployment runs the Model's source from the Model's claim")
		Eventually(func(g Gomega) {
			g.Expect(modelResolvedOf(g, ns, "llama-3b-gpu-service").Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		d := eventuallyDeployment(ns, "llama-3b-gpu-service", func(g Gomega, d *appsv1.Deployment) {})
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.Image).To(Equal("ghcr.io/ggml-org/llama.cpp:server-cuda"))
		Expect(c.Args).To(ContainElements("--model-url", "https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q8_0.gguf"))
		Expect(c.Resources.Limits).To(HaveKeyWithValue(corev1.ResourceName("nvidia.com/gpu"), resource.MustParse("1")))
		Expect(envOf(d)).To(HaveKeyWithValue("LLAMA_CACHE", corev1.EnvVar{Name: "LLAMA_CACHE", Value: inferenceservice.CacheMountPath}))
		Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: inferenceservice.CacheVolumeName, MountPath: inferenceservice.CacheMountPath}))
		Expect(cacheClaimOf(d)).To(Equal("llama-3b-gpu-model-cache"))

		By("the claim belongs to the Model, not to the InferenceService, so it outlives it")
		pvc := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "llama-3b-gpu-model-cache"}, pvc)).To(Succeed())
		Expect(pvc.OwnerReferences).To(HaveLen(1))
		Expect(pvc.OwnerReferences[0].Kind).To(Equal("Model"))
		Expect(pvc.OwnerReferences[0].Name).To(Equal("llama-3b-gpu"))
		Expect(pvc.Spec.Resources.Requests).To(HaveKeyWithValue(corev1.ResourceStorage, inferenceservice.DefaultCacheSize))
		Expect(pvc.ManagedFields).To(ContainElement(HaveField("Manager", "llmkube-operator")))

		By("kubectl shows both kinds")
		out, err := kubectl("", "get", "mdl,isvc", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("llama-3b-gpu"))

		By("a second apply of the same manifests sends the operator nothing to write")
		eventuallyStatus(ns, "llama-3b-gpu-service")
		time.Sleep(time.Second)
		from := op.mark()
		_, err = applyAs("gitops", llmkubePair(ns))
		Expect(err).NotTo(HaveOccurred())
		Consistently(func() []string { return op.writes(from) }).WithTimeout(2 * time.Second).Should(BeEmpty())
	})

	It("serves LLMKube's vLLM sample and GPU Model as written, with the flags, GPUs and autoscaling LLMKube derives from them [M2]", func() {
		// LLMKube's vLLM sample (config/samples/vllm-tinyllama.yaml), unchanged, with its Model.
		_, err := applyAs("gitops", fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: Model
metadata:
  name: tinyllama-1b
  namespace: %[1]s
spec:
  source: TinyLlama/TinyLlama-1.1B-Chat-v1.0
  format: safetensors
  hardware:
    accelerator: cuda
    gpu:
      enabled: true
      count: 1
      vendor: nvidia
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: vllm-tinyllama
  namespace: %[1]s
spec:
  modelRef: tinyllama-1b
  runtime: vllm
  image: vllm/vllm-openai:v0.20.0
  skipModelInit: true
  vllmConfig:
    maxModelLen: 2048
    dtype: float16
    hfTokenSecretRef:
      name: hf-token
      key: HF_TOKEN
  endpoint:
    port: 8000
    type: ClusterIP
  resources:
    gpu: 1
    cpu: "2"
    memory: "8Gi"
  autoscaling:
    maxReplicas: 3
    metrics:
    - type: Pods
      name: vllm:num_requests_running
      targetAverageValue: "2"
`, ns))
		Expect(err).NotTo(HaveOccurred())

		d := eventuallyDeployment(ns, "vllm-tinyllama", func(g Gomega, d *appsv1.Deployment) {})
		pod := d.Spec.Template.Spec
		c := pod.Containers[0]
		Expect(c.Args).To(ContainElements("--max-model-len", "2048", "--dtype", "float16"))
		Expect(c.Resources.Limits).To(HaveKeyWithValue(corev1.ResourceName("nvidia.com/gpu"), resource.MustParse("1")))
		Expect(pod.Tolerations).To(ContainElement(HaveField("Key", "nvidia.com/gpu")))
		Expect(pod.EnableServiceLinks).To(Equal(ptr.To(false)), "a Service named vllm must not inject VLLM_PORT into vLLM's environment")
		Expect(envOf(d)).To(HaveKey("HF_TOKEN"))
		Expect(envOf(d)["HF_TOKEN"].ValueFrom.SecretKeyRef).To(Equal(&corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "hf-token"}, Key: "HF_TOKEN"}))
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("inference.llmkube.dev/model", "tinyllama-1b"))

		By("LLMKube's short autoscaling metric becomes the HorizontalPodAutoscaler's Pods metric")
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		Eventually(func() error {
			return k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "vllm-tinyllama"}, hpa)
		}).Should(Succeed())
		Expect(hpa.Spec.Metrics).To(HaveLen(1))
		Expect(hpa.Spec.Metrics[0].Pods.Metric.Name).To(Equal("vllm:num_requests_running"))
		Expect(hpa.Spec.Metrics[0].Pods.Target.AverageValue.String()).To(Equal("2"))

		By("LLMKube's GPU sample's Model, with its gpu.memory and gpu.layers, runs llama.cpp with every layer on the GPU")
		_, err = applyAs("gitops", fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: Model
metadata:
  name: llama-3b-gpu
  namespace: %[1]s
spec:
  source: https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q8_0.gguf
  format: gguf
  hardware:
    accelerator: cuda
    gpu:
      enabled: true
      count: 1
      memory: "8Gi"
      layers: -1
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: llama-3b-gpu-service
  namespace: %[1]s
spec:
  modelRef: llama-3b-gpu
`, ns))
		Expect(err).NotTo(HaveOccurred())
		d = eventuallyDeployment(ns, "llama-3b-gpu-service", func(g Gomega, d *appsv1.Deployment) {})
		Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--n-gpu-layers", "99", "--host", "::"))
	})

	It("gives every runtime its cache variable and lets two InferenceServices share one Model's claim [M5]", func() {
		newModel(ns, "qwen", func(m *inferencev1alpha1.Model) {
			m.Spec.SourceSecretRef = &inferencev1alpha1.SecretKeyReference{Name: "hf-token"}
			m.Spec.Hardware = &inferencev1alpha1.ModelHardware{GPU: &inferencev1alpha1.ModelGPU{Enabled: true, Count: ptr.To[int32](2), ResourceName: "nvidia.com/mig-3g.20gb"}}
		})
		want := map[inferencev1alpha1.Runtime]string{
			inferencev1alpha1.RuntimeVLLM:     "HF_HOME",
			inferencev1alpha1.RuntimeTGI:      "HF_HOME",
			inferencev1alpha1.RuntimeSGLang:   "HF_HOME",
			inferencev1alpha1.RuntimeLlamaCPP: "LLAMA_CACHE",
		}
		for rt := range want {
			refISVC(ns, string(rt), "qwen", rt, nil)
		}
		for rt, variable := range want {
			d := eventuallyDeployment(ns, string(rt), func(g Gomega, d *appsv1.Deployment) {})
			env := envOf(d)
			Expect(env).To(HaveKeyWithValue(variable, corev1.EnvVar{Name: variable, Value: inferenceservice.CacheMountPath}), string(rt))
			Expect(env).To(HaveKey(inferenceservice.EnvHFToken), string(rt))
			Expect(env[inferenceservice.EnvHFToken].ValueFrom.SecretKeyRef).To(Equal(&corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "hf-token"}, Key: "HF_TOKEN"}), string(rt))
			Expect(cacheClaimOf(d)).To(Equal("qwen-model-cache"), string(rt))
			Expect(d.Spec.Template.Spec.Containers[0].Resources.Limits).To(HaveKeyWithValue(corev1.ResourceName("nvidia.com/mig-3g.20gb"), resource.MustParse("2")), string(rt))
		}
		pvcs := &corev1.PersistentVolumeClaimList{}
		Expect(k8sClient.List(suiteCtx, pvcs)).To(Succeed())
		var names []string
		for _, p := range pvcs.Items {
			if p.Namespace == ns {
				names = append(names, p.Name)
			}
		}
		Expect(names).To(ConsistOf("qwen-model-cache"), "one claim for the Model, shared")
		Expect(op.secretReads()).NotTo(ContainElement(ContainSubstring("hf-token")), "the token Secret is passed by reference, never read")

		By("Ephemeral is an emptyDir, claimName the user's claim")
		refISVC(ns, "eph", "qwen", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{Persistence: ptr.To(inferencev1alpha1.ModelCacheEphemeral)}
		})
		refISVC(ns, "mine", "qwen", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{ClaimName: ptr.To("shared-rwx")}
		})
		d := eventuallyDeployment(ns, "eph", func(g Gomega, d *appsv1.Deployment) {})
		Expect(d.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.EmptyDir", Not(BeNil()))))
		d = eventuallyDeployment(ns, "mine", func(g Gomega, d *appsv1.Deployment) {})
		Expect(cacheClaimOf(d)).To(Equal("shared-rwx"))
	})

	It("rolls every InferenceService of a Model when the Model changes [M4]", func() {
		newModel(ns, "m", nil)
		refISVC(ns, "a", "m", inferencev1alpha1.RuntimeVLLM, nil)
		refISVC(ns, "b", "m", inferencev1alpha1.RuntimeTGI, nil)
		eventuallyDeployment(ns, "a", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("Qwen/Qwen2.5-0.5B-Instruct"))
		})
		eventuallyDeployment(ns, "b", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("Qwen/Qwen2.5-0.5B-Instruct"))
		})
		edit(ns, "m", &inferencev1alpha1.Model{}, func(m *inferencev1alpha1.Model) { m.Spec.Source = "Qwen/Qwen2.5-1.5B-Instruct" })
		for _, name := range []string{"a", "b"} {
			eventuallyDeployment(ns, name, func(g Gomega, d *appsv1.Deployment) {
				g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("Qwen/Qwen2.5-1.5B-Instruct"))
			})
		}
		eventually(ns, "m", &inferencev1alpha1.Model{}, func(g Gomega, m *inferencev1alpha1.Model) {
			g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
		})
	})

	It("holds a Model change behind the rollout gate like any template change [W7]", func() {
		newModel(ns, "m", nil)
		refISVC(ns, "g", "m", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.RolloutPolicy = &inferencev1alpha1.RolloutPolicy{WaitForIdle: ptr.To(true)}
		})
		eventuallyDeployment(ns, "g", func(g Gomega, d *appsv1.Deployment) {})
		pod := newRuntimePod("vllm:num_requests_running", 1)
		endpointSlice(ns, "g", pod.port())

		edit(ns, "m", &inferencev1alpha1.Model{}, func(m *inferencev1alpha1.Model) { m.Spec.Source = "Qwen/Qwen2.5-1.5B-Instruct" })
		Eventually(func(g Gomega) {
			c := rolloutDeferred(ns, "g")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(rollout.ReasonWaitingForIdle))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(deployment(ns, "g").Spec.Template.Spec.Containers[0].Args).To(ContainElement("Qwen/Qwen2.5-0.5B-Instruct"))

		pod.inFlight.Store(0)
		eventuallyDeployment(ns, "g", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("Qwen/Qwen2.5-1.5B-Instruct"))
		})
	})

	It("reports a Model Ready only once an InferenceService that names it has a ready pod, writing its status once per change [M9]", func() {
		modelStatusWrites := func(from int) []string {
			var out []string
			for _, w := range op.writes(from) {
				if strings.HasSuffix(w, "/namespaces/"+ns+"/models/m/status") {
					out = append(out, w)
				}
			}
			return out
		}
		readyOf := func(g Gomega, m *inferencev1alpha1.Model) *metav1.Condition {
			g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
			g.Expect(meta.IsStatusConditionTrue(m.Status.Conditions, inferencev1alpha1.ConditionAccepted)).To(BeTrue())
			c := meta.FindStatusCondition(m.Status.Conditions, inferencev1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			return c
		}
		from := op.mark()

		By("accepted, and not in use: nothing downloads it, and nothing is pending for kstatus (Ready=True/NotInUse) [I49]")
		newModel(ns, "m", nil)
		eventually(ns, "m", &inferencev1alpha1.Model{}, func(g Gomega, m *inferencev1alpha1.Model) {
			c := readyOf(g, m)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(model.ReasonNotInUse))
			g.Expect(c.Message).To(ContainSubstring("spec.modelRef: m"))
			g.Expect(m.Status.Phase).To(Equal(inferencev1alpha1.PhasePending))
			g.Expect(m.Status.UsedBy).To(BeEmpty())
		})

		By("named by an InferenceService whose runtime has no ready pod: Loading")
		refISVC(ns, "a", "m", inferencev1alpha1.RuntimeVLLM, nil)
		eventually(ns, "m", &inferencev1alpha1.Model{}, func(g Gomega, m *inferencev1alpha1.Model) {
			c := readyOf(g, m)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(model.ReasonLoading))
			g.Expect(m.Status.UsedBy).To(Equal([]string{"a"}))
			g.Expect(m.Status.InferenceServices).To(BeEquivalentTo(1))
			g.Expect(m.Status.ReadyInferenceServices).To(BeZero())
		})

		By("a pod becomes ready (a kube-controller-manager stand-in writes the Deployment's status): Ready")
		eventuallyDeployment(ns, "a", func(g Gomega, d *appsv1.Deployment) {})
		// Read, change, update, retried on a conflict, as the Deployment controller does.
		deploymentStatus(ns, "a", func(d *appsv1.Deployment) {
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
		})
		eventually(ns, "m", &inferencev1alpha1.Model{}, func(g Gomega, m *inferencev1alpha1.Model) {
			c := readyOf(g, m)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(model.ReasonLoaded))
			g.Expect(m.Status.Phase).To(Equal(inferencev1alpha1.PhaseReady))
			g.Expect(m.Status.ReadyInferenceServices).To(BeEquivalentTo(1))
		})
		out, err := kubectl("", "get", "models", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`USED-BY\s+SERVING`))
		Expect(out).To(MatchRegexp(`\bm\s+Qwen/Qwen2.5-0.5B-Instruct\s+Ready\s+1\s+1\b`))

		By("its last InferenceService deleted: not in use again")
		Expect(k8sClient.Delete(suiteCtx, &inferencev1alpha1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}})).To(Succeed())
		eventually(ns, "m", &inferencev1alpha1.Model{}, func(g Gomega, m *inferencev1alpha1.Model) {
			c := readyOf(g, m)
			g.Expect(c.Reason).To(Equal(model.ReasonNotInUse))
			g.Expect(m.Status.UsedBy).To(BeEmpty())
			g.Expect(m.Status.InferenceServices).To(BeZero())
		})

		By("four changes, four status writes: none repeated while the cache lagged, none flapping after")
		Consistently(func() []string { return modelStatusWrites(from) }).WithTimeout(2 * time.Second).Should(HaveLen(4))
	})

	It("waits for a missing Model without a Deployment, then runs it; a deleted Model leaves the Deployment as it is [M3]", func() {
		refISVC(ns, "early", "later", inferencev1alpha1.RuntimeVLLM, nil)
		Eventually(func(g Gomega) {
			c := modelResolvedOf(g, ns, "early")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(inferenceservice.ReasonModelNotFound))
		}).Should(Succeed())
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: ns, Name: "early"}, &appsv1.Deployment{}))
		}).WithTimeout(time.Second).Should(BeTrue(), "no Deployment without its Model")
		Expect(getISVC(ns, "early").Status.Phase).To(Equal(inferencev1alpha1.PhasePending))

		newModel(ns, "later", nil)
		eventuallyDeployment(ns, "early", func(g Gomega, d *appsv1.Deployment) {
			g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("Qwen/Qwen2.5-0.5B-Instruct"))
		})
		Eventually(func(g Gomega) {
			g.Expect(modelResolvedOf(g, ns, "early").Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		before := deployment(ns, "early")
		Expect(k8sClient.Delete(suiteCtx, &inferencev1alpha1.Model{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(modelResolvedOf(g, ns, "early").Reason).To(Equal(inferenceservice.ReasonModelNotFound))
		}).Should(Succeed())
		Expect(deployment(ns, "early").ResourceVersion).To(Equal(before.ResourceVersion), "the existing Deployment is left as it is")
	})

	It("reports a refused claim change as Degraded with what to do, without a retry loop [M6]", func() {
		newModel(ns, "m", nil)
		refISVC(ns, "c", "m", inferencev1alpha1.RuntimeVLLM, func(i *inferencev1alpha1.InferenceService) {
			i.Spec.ModelCache = &inferencev1alpha1.ModelCacheSpec{StorageClassName: ptr.To("fast")}
		})
		eventually(ns, "m-model-cache", &corev1.PersistentVolumeClaim{}, func(g Gomega, p *corev1.PersistentVolumeClaim) {
			g.Expect(ptr.Deref(p.Spec.StorageClassName, "")).To(Equal("fast"))
		})
		editISVC(ns, "c", func(i *inferencev1alpha1.InferenceService) { i.Spec.ModelCache.StorageClassName = ptr.To("slow") })
		Eventually(func(g Gomega) {
			isvc := getISVC(ns, "c")
			c := meta.FindStatusCondition(isvc.Status.Conditions, inferencev1alpha1.ConditionDegraded)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(isvc.Generation))
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("model cache claim m-model-cache"))
			g.Expect(c.Message).To(ContainSubstring("delete the claim so that the operator makes a new one"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		time.Sleep(500 * time.Millisecond)
		from := op.mark()
		Consistently(func() int {
			n := 0
			for _, r := range op.writes(from) {
				if strings.Contains(r, "/persistentvolumeclaims/") {
					n++
				}
			}
			return n
		}).WithTimeout(3*time.Second).Should(BeNumerically("<=", 1), "a refused claim is not retried in a loop")
	})
})
