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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	acv1alpha1 "github.com/llmkube/operator/applyconfig/api/v1alpha1"
	"github.com/llmkube/operator/test/envtest/testenv"
)

// object builds an unstructured object of ours from a spec map, so that invalid values (unknown
// enums, wrong types) reach the API server unchanged.
func object(kind, ns string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "inference.llmkube.dev/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]any{"generateName": "adm-", "namespace": ns},
		"spec":       spec,
	}}
	return u
}

// isvcSpec is a valid InferenceService spec that a case then breaks in one place.
func isvcSpec(mutate func(map[string]any)) map[string]any {
	s := map[string]any{"model": map[string]any{"source": "hf://org/repo/model.gguf"}}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func routerSpec(mutate func(map[string]any)) map[string]any {
	s := map[string]any{"backends": []any{map[string]any{"name": "a", "inferenceServiceRef": map[string]any{"name": "x"}}}}
	if mutate != nil {
		mutate(s)
	}
	return s
}

var _ = Describe("Admission", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("accepts every sample in config/samples", func() {
		files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).NotTo(BeEmpty())
		for _, f := range files {
			data, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal(data, &u.Object)).To(Succeed())
			u.SetNamespace(ns)
			Expect(k8sClient.Create(suiteCtx, u)).To(Succeed(), f)
		}
	})

	DescribeTable("accepts valid specs",
		func(kind string, spec map[string]any) {
			Expect(k8sClient.Create(suiteCtx, object(kind, ns, spec))).To(Succeed())
		},
		Entry("a Hugging Face repo id", "InferenceService", isvcSpec(func(s map[string]any) { s["model"] = map[string]any{"source": "Qwen/Qwen2.5-0.5B-Instruct"} })),
		Entry("an https URL", "InferenceService", isvcSpec(func(s map[string]any) {
			s["model"] = map[string]any{"source": "https://example.com/models/m.gguf"}
		})),
		Entry("a path on a volume", "InferenceService", isvcSpec(func(s map[string]any) { s["model"] = map[string]any{"source": "/models/m.gguf"} })),
		Entry("prefixed label keys and empty values", "InferenceService", isvcSpec(func(s map[string]any) {
			s["podLabels"] = map[string]any{"example.com/team": "a", "tier": ""}
		})),
		Entry("minReplicas equal to maxReplicas", "InferenceService", isvcSpec(func(s map[string]any) {
			s["autoscaling"] = map[string]any{"minReplicas": 2, "maxReplicas": 2}
		})),
		Entry("a modelRef instead of a model", "InferenceService", map[string]any{"modelRef": "llama"}),
		Entry("a modelRef with every cache setting", "InferenceService", map[string]any{"modelRef": "llama",
			"modelCache": map[string]any{"persistence": "Cached", "size": "100Gi", "storageClassName": "fast"}, "skipModelInit": true}),
		// LLMKube's fields: accepted as LLMKube accepts them. What the operator does with each
		// (served, or Stalled naming it) is decided in controllers/inferenceservice/unserved.go and
		// checked for every field by TestEveryLLMKubeFieldIsCovered.
		Entry("LLMKube's contextSize, flashAttention and jinja", "InferenceService", isvcSpec(func(s map[string]any) {
			s["contextSize"] = 8192
			s["flashAttention"] = true
			s["jinja"] = true
		})),
		Entry("LLMKube's vllmConfig", "InferenceService", isvcSpec(func(s map[string]any) {
			s["runtime"] = "vllm"
			s["vllmConfig"] = map[string]any{"maxModelLen": 2048}
		})),
		Entry("LLMKube's priorityClassName and resources.gpuMemory", "InferenceService", isvcSpec(func(s map[string]any) {
			s["priorityClassName"] = "high"
			s["resources"] = map[string]any{"gpu": 1, "gpuMemory": "8Gi"}
		})),
		Entry("a Model with an http source", "Model", map[string]any{"source": "http://example.com/m.gguf"}),
		Entry("a Model in LLMKube's mlx format", "Model", map[string]any{"source": "org/m", "format": "mlx"}),
		Entry("LLMKube's hardware.gpu.layers and memory", "Model", map[string]any{"source": "org/m",
			"hardware": map[string]any{"gpu": map[string]any{"enabled": true, "layers": -1, "memory": "8Gi"}}}),
		Entry("LLMKube's sha256 and hardware.memoryBudget", "Model", map[string]any{"source": "org/m", "sha256": strings.Repeat("a", 64),
			"hardware": map[string]any{"memoryBudget": "24Gi"}}),
		Entry("a Model as LLMKube's vLLM sample writes it", "Model", map[string]any{"source": "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "format": "safetensors",
			"hardware": map[string]any{"accelerator": "cuda", "gpu": map[string]any{"enabled": true, "count": 1, "vendor": "nvidia"}}}),
		Entry("a Model with every supported field", "Model", map[string]any{"source": "hf://org/repo-GGUF", "format": "gguf", "quantization": "Q4_K_M",
			"files": []any{"m-Q4_K_M.gguf"}, "sourceSecretRef": map[string]any{"name": "hf", "key": "token"},
			"hardware":  map[string]any{"gpu": map[string]any{"count": 2, "vendor": "amd", "resourceName": "amd.com/gpu"}},
			"resources": map[string]any{"cpu": "2", "memory": "8Gi"}}),
		Entry("generic with an image", "InferenceService", isvcSpec(func(s map[string]any) { s["runtime"] = "generic"; s["image"] = "example.com/srv:1" })),
		Entry("a router with an external backend", "ModelRouter", routerSpec(func(s map[string]any) {
			s["backends"] = []any{map[string]any{"name": "oai", "external": map[string]any{"provider": "openai", "url": "https://api.openai.com/v1"}}}
			s["defaultRoute"] = "oai"
		})),
		Entry("a router rule with fallbacks and client keys", "ModelRouter", routerSpec(func(s map[string]any) {
			s["backends"] = []any{map[string]any{"name": "a", "inferenceServiceRef": map[string]any{"name": "x"}},
				map[string]any{"name": "oai", "external": map[string]any{"provider": "openai", "url": "https://api.openai.com/v1"}}}
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a", "fallbacks": []any{"oai"}}}
			s["proxy"] = map[string]any{"apiKeySecretRef": map[string]any{"name": "keys"}}
		})),
		Entry("router rule timeouts as Go durations", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{
				map[string]any{"name": "a", "models": []any{"m"}, "backend": "a", "timeout": "90s"},
				map[string]any{"name": "b", "models": []any{"n"}, "backend": "a", "timeout": "1h30m"},
				map[string]any{"name": "c", "models": []any{"o"}, "backend": "a", "timeout": "1.5s"},
			}
		})),
	)

	DescribeTable("rejects invalid specs with a message that names the field [O3]",
		func(kind string, spec map[string]any, message string) {
			err := k8sClient.Create(suiteCtx, object(kind, ns, spec))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("a label key with a space", "InferenceService", isvcSpec(func(s map[string]any) { s["podLabels"] = map[string]any{"bad key": "v"} }),
			"spec.podLabels has an invalid label key: bad key"),
		Entry("a label key with a bad prefix", "InferenceService", isvcSpec(func(s map[string]any) { s["podLabels"] = map[string]any{"Bad_Prefix/x": "v"} }),
			"spec.podLabels has an invalid label key: Bad_Prefix/x"),
		Entry("a label value too long", "InferenceService", isvcSpec(func(s map[string]any) {
			s["podLabels"] = map[string]any{"team": "a234567890123456789012345678901234567890123456789012345678901234"}
		}), "spec.podLabels.team: Too long: may not be more than 63 bytes"),
		Entry("a label value with a slash", "InferenceService", isvcSpec(func(s map[string]any) { s["podLabels"] = map[string]any{"team": "a/b"} }),
			"a label value holds only letters, digits, -, _ and . (no spaces), at most 63 characters, starting and ending with a letter or digit, such as team-a or v1.2; got: a/b"),
		Entry("an operator label key, silently dropped before", "InferenceService", isvcSpec(func(s map[string]any) {
			s["podLabels"] = map[string]any{"inference.llmkube.dev/runtime": "x"}
		}), "spec.podLabels must not set inference.llmkube.dev/runtime: keys under inference.llmkube.dev/ are the operator's own, and it would overwrite yours; use a prefix of your own, such as example.com/team"),
		Entry("memory 16GB", "InferenceService", isvcSpec(func(s map[string]any) { s["resources"] = map[string]any{"memory": "16GB"} }),
			"spec.resources.memory 16GB is not a quantity: write a number and a unit, Ki, Mi, Gi or Ti (powers of 1024) or k, M, G or T (powers of 1000), such as 16Gi"),
		Entry("an operator label key on the proxy", "ModelRouter", routerSpec(func(s map[string]any) {
			s["proxy"] = map[string]any{"podLabels": map[string]any{"inference.llmkube.dev/runtime": "x"}}
		}), "spec.proxy.podLabels must not set inference.llmkube.dev/runtime: keys under inference.llmkube.dev/"),
		Entry("the reserved label app", "InferenceService", isvcSpec(func(s map[string]any) { s["podLabels"] = map[string]any{"app": "x"} }),
			"spec.podLabels must not set app: the operator reserves it"),
		Entry("the reserved label inference.llmkube.dev/service", "InferenceService", isvcSpec(func(s map[string]any) {
			s["podLabels"] = map[string]any{"inference.llmkube.dev/service": "x"}
		}), "spec.podLabels must not set inference.llmkube.dev/service"),
		Entry("an annotation key with a space", "InferenceService", isvcSpec(func(s map[string]any) { s["podAnnotations"] = map[string]any{"no spaces": "v"} }),
			"spec.podAnnotations has an invalid annotation key: no spaces"),
		Entry("containerPort 0", "InferenceService", isvcSpec(func(s map[string]any) { s["containerPort"] = 0 }),
			"spec.containerPort: Invalid value: 0: spec.containerPort in body should be greater than or equal to 1"),
		Entry("containerPort 70000", "InferenceService", isvcSpec(func(s map[string]any) { s["containerPort"] = 70000 }),
			"spec.containerPort in body should be less than or equal to 65535"),
		Entry("endpoint.port 0", "InferenceService", isvcSpec(func(s map[string]any) { s["endpoint"] = map[string]any{"port": 0} }),
			"spec.endpoint.port in body should be greater than or equal to 1"),
		Entry("minReplicas above maxReplicas", "InferenceService", isvcSpec(func(s map[string]any) {
			s["autoscaling"] = map[string]any{"minReplicas": 3, "maxReplicas": 2}
		}), "spec.autoscaling.minReplicas must not be greater than spec.autoscaling.maxReplicas"),
		Entry("an unknown runtime", "InferenceService", isvcSpec(func(s map[string]any) { s["runtime"] = "ollama" }),
			`spec.runtime: Unsupported value: "ollama"`),
		Entry("a malformed model source", "InferenceService", isvcSpec(func(s map[string]any) { s["model"] = map[string]any{"source": "not a source"} }),
			"spec.model.source must be a Hugging Face repo id"),
		Entry("an http model URL", "InferenceService", isvcSpec(func(s map[string]any) { s["model"] = map[string]any{"source": "http://example.com/m.gguf"} }),
			"spec.model.source must be a Hugging Face repo id"),
		Entry("generic without an image", "InferenceService", isvcSpec(func(s map[string]any) { s["runtime"] = "generic" }),
			"spec.image is required when runtime is generic"),
		Entry("endpoint.port 70000", "InferenceService", isvcSpec(func(s map[string]any) { s["endpoint"] = map[string]any{"port": 70000} }),
			"spec.endpoint.port in body should be less than or equal to 65535"),
		Entry("an endpoint path without a leading slash", "InferenceService", isvcSpec(func(s map[string]any) { s["endpoint"] = map[string]any{"path": "v1"} }),
			"spec.endpoint.path in body should match '^/'"),
		Entry("negative replicas", "InferenceService", isvcSpec(func(s map[string]any) { s["replicas"] = -1 }),
			"spec.replicas in body should be greater than or equal to 0"),
		Entry("minReplicas 0", "InferenceService", isvcSpec(func(s map[string]any) {
			s["autoscaling"] = map[string]any{"minReplicas": 0, "maxReplicas": 2}
		}), "spec.autoscaling.minReplicas in body should be greater than or equal to 1"),
		Entry("a label value with a space", "InferenceService", isvcSpec(func(s map[string]any) { s["podLabels"] = map[string]any{"team": "a b"} }),
			"a label value holds only letters, digits, -, _ and . (no spaces), at most 63 characters, starting and ending with a letter or digit, such as team-a or v1.2; got: a b"),
		Entry("a label key name over 63 characters", "InferenceService", isvcSpec(func(s map[string]any) {
			s["podLabels"] = map[string]any{"example.com/a234567890123456789012345678901234567890123456789012345678901234": "v"}
		}), "spec.podLabels has an invalid label key: example.com/a234567890123456789012345678901234567890123456789012345678901234"),
		Entry("an annotation key with an empty name", "InferenceService", isvcSpec(func(s map[string]any) { s["podAnnotations"] = map[string]any{"example.com/": "v"} }),
			"spec.podAnnotations has an invalid annotation key: example.com/"),
		Entry("an hf:// source without a repo", "InferenceService", isvcSpec(func(s map[string]any) { s["model"] = map[string]any{"source": "hf://org"} }),
			"spec.model.source must be a Hugging Face repo id"),
		Entry("an ftp model URL", "InferenceService", isvcSpec(func(s map[string]any) { s["model"] = map[string]any{"source": "ftp://example.com/m.gguf"} }),
			"spec.model.source must be a Hugging Face repo id"),
		Entry("an empty model source", "InferenceService", isvcSpec(func(s map[string]any) { s["model"] = map[string]any{"source": ""} }),
			"spec.model.source in body should be at least 1 chars long"),
		Entry("a missing model", "InferenceService", map[string]any{"replicas": 1}, "exactly one of spec.model and spec.modelRef must be set"),
		Entry("both model and modelRef", "InferenceService", isvcSpec(func(s map[string]any) { s["modelRef"] = "m" }),
			"exactly one of spec.model and spec.modelRef must be set"),
		Entry("a cache claimName with a storage class", "InferenceService", isvcSpec(func(s map[string]any) {
			s["modelCache"] = map[string]any{"claimName": "mine", "storageClassName": "fast"}
		}), "spec.modelCache.claimName names a claim you made"),
		Entry("an unknown cache persistence", "InferenceService", isvcSpec(func(s map[string]any) { s["modelCache"] = map[string]any{"persistence": "Forever"} }),
			`spec.modelCache.persistence: Unsupported value: "Forever"`),
		Entry("a Model without a source", "Model", map[string]any{"format": "gguf"}, "spec.source: Required value"),
		Entry("more than 64 GPUs", "InferenceService", isvcSpec(func(s map[string]any) { s["resources"] = map[string]any{"gpu": 65} }),
			"spec.resources.gpu in body should be less than or equal to 64"),
		Entry("a router port of 70000", "ModelRouter", routerSpec(func(s map[string]any) { s["endpoint"] = map[string]any{"port": 70000} }),
			"spec.endpoint.port in body should be less than or equal to 65535"),
		Entry("a router label value too long", "ModelRouter", routerSpec(func(s map[string]any) {
			s["proxy"] = map[string]any{"podLabels": map[string]any{"team": "a234567890123456789012345678901234567890123456789012345678901234"}}
		}), "spec.proxy.podLabels.team: Too long: may not be more than 63 bytes"),
		Entry("the router's reserved label", "ModelRouter", routerSpec(func(s map[string]any) {
			s["proxy"] = map[string]any{"podLabels": map[string]any{"inference.llmkube.dev/model-router": "x"}}
		}), "spec.proxy.podLabels must not set inference.llmkube.dev/model-router"),
		Entry("a router label key with a space", "ModelRouter", routerSpec(func(s map[string]any) {
			s["proxy"] = map[string]any{"podLabels": map[string]any{"a b": "x"}}
		}), "spec.proxy.podLabels has an invalid label key: a b"),
		Entry("a backend with both a ref and an external API", "ModelRouter", routerSpec(func(s map[string]any) {
			s["backends"] = []any{map[string]any{"name": "a", "inferenceServiceRef": map[string]any{"name": "x"},
				"external": map[string]any{"provider": "openai", "url": "https://api.openai.com"}}}
		}), "a backend sets exactly one of inferenceServiceRef and external"),
		Entry("a default route to no backend", "ModelRouter", routerSpec(func(s map[string]any) { s["defaultRoute"] = "nope" }),
			"spec.defaultRoute must name one of spec.backends"),
		Entry("a rule timeout that does not parse", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a", "timeout": "ten minutes"}}
		}), "spec.rules[0].timeout"),
		Entry("a rule timeout without a unit", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a", "timeout": "90"}}
		}), "spec.rules[0].timeout"),
		Entry("a zero rule timeout", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a", "timeout": "0s"}}
		}), "timeout must be a positive duration"),
		Entry("a negative rule timeout", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a", "timeout": "-5s"}}
		}), "spec.rules[0].timeout"),
		Entry("a router port of 0", "ModelRouter", routerSpec(func(s map[string]any) { s["endpoint"] = map[string]any{"port": 0} }),
			"spec.endpoint.port in body should be greater than or equal to 1"),
		Entry("a fallback to the rule's own backend", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a", "fallbacks": []any{"a"}}}
		}), "spec.rules[].fallbacks must name backends other than the rule's own backend"),
		Entry("a rule to no backend, the second rule", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{
				map[string]any{"name": "ok", "models": []any{"m"}, "backend": "a"},
				map[string]any{"name": "typo", "models": []any{"n"}, "backend": "nope"},
			}
		}), "spec.rules[1].backend: nope (rule typo) is not the name of any of spec.backends [\"a\"]: name one of those, or add a backend with that name"),
		Entry("a fallback to no backend", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a", "fallbacks": []any{"nope"}}}
		}), "every spec.rules[].fallbacks entry must name one of spec.backends"),
		Entry("nine fallbacks", "ModelRouter", routerSpec(func(s map[string]any) {
			s["rules"] = []any{map[string]any{"name": "r", "models": []any{"m"}, "backend": "a",
				"fallbacks": []any{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"}}}
		}), "spec.rules[0].fallbacks: Too many: 9: must have at most 8 items"),
	)

	It("treats a second server-side apply of the same configuration as a no-op [GO1]", func() {
		// Note: a fresh configuration for each apply; controller-runtime decodes the server's answer
		// into the one it sends, which would make the second apply claim the defaulted fields too.
		isvc := func() *acv1alpha1.InferenceServiceApplyConfiguration {
			return acv1alpha1.InferenceService("twice", ns).
				WithSpec(acv1alpha1.InferenceServiceSpec().
					WithModel(acv1alpha1.ModelSpec().WithSource("org/model")).
					WithReplicas(1).
					WithPodLabels(map[string]inferencev1alpha1.LabelValue{"team": "a"}))
		}
		Expect(k8sClient.Apply(suiteCtx, isvc(), client.FieldOwner("gitops"))).To(Succeed())
		first := &inferencev1alpha1.InferenceService{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "twice"}, first)).To(Succeed())

		Expect(k8sClient.Apply(suiteCtx, isvc(), client.FieldOwner("gitops"))).To(Succeed())
		second := &inferencev1alpha1.InferenceService{}
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: "twice"}, second)).To(Succeed())
		Expect(second.ManagedFields).To(Equal(first.ManagedFields))
		Expect(second.ResourceVersion).To(Equal(first.ResourceVersion))
		Expect(second.Generation).To(Equal(first.Generation))
	})
})
