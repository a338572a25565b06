/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package runtimes is the operator's one place of per-runtime knowledge: default image and port,
// how a model source becomes arguments, the health path, and the gauge that says how many
// requests are in flight.
package runtimes

import (
	"strconv"
	"strings"

	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
)

// Runtime is what the operator knows about one inference server.
type Runtime struct {
	// Image is the default image when spec.image is not set; empty for generic.
	Image string
	// Port is the default port the server listens on.
	Port int32
	// HealthPath answers 200 once the model is loaded; empty means a TCP check.
	HealthPath string
	// InFlightMetric is the Prometheus gauge of requests being processed; empty when the runtime
	// exposes none the operator knows.
	InFlightMetric string
	// Command overrides the image's entrypoint, for images that have none of use.
	Command []string
	// CacheEnv is the environment variable that moves the runtime's own download cache, pointed
	// at the model cache volume; empty when the operator knows none (generic).
	CacheEnv string
	// StreamUsage says the server's OpenAI API accepts stream_options.include_usage, so a router
	// may ask it for a stream's usage (docs/router.md, "Token accounting", says where each
	// runtime documents it); a server not known to accept it is never sent the field.
	StreamUsage bool
	// args builds the arguments that load source and listen on port.
	args func(m model, port int32) []string
}

var known = map[inferencev1alpha1.Runtime]Runtime{
	inferencev1alpha1.RuntimeLlamaCPP: {
		Image: "ghcr.io/ggml-org/llama.cpp:server", Port: 8080, HealthPath: "/health",
		InFlightMetric: "llamacpp:requests_processing",
		CacheEnv:       "LLAMA_CACHE",
		StreamUsage:    true,
		args: func(m model, port int32) []string {
			a := []string{"--host", "0.0.0.0", "--port", itoa(port), "--metrics"}
			switch {
			case m.repo != "" && m.file != "":
				return append(a, "--hf-repo", m.repo, "--hf-file", m.file)
			case m.repo != "":
				return append(a, "--hf-repo", m.repo)
			case m.url != "":
				return append(a, "--model-url", m.url)
			default:
				return append(a, "--model", m.path)
			}
		},
	},
	inferencev1alpha1.RuntimeVLLM: {
		Image: "vllm/vllm-openai:latest", Port: 8000, HealthPath: "/health",
		InFlightMetric: "vllm:num_requests_running",
		CacheEnv:       "HF_HOME",
		StreamUsage:    true,
		args: func(m model, port int32) []string {
			return []string{"--model", m.ref(), "--host", "0.0.0.0", "--port", itoa(port)}
		},
	},
	inferencev1alpha1.RuntimeTGI: {
		Image: "ghcr.io/huggingface/text-generation-inference:latest", Port: 80, HealthPath: "/health",
		InFlightMetric: "tgi_batch_current_size",
		CacheEnv:       "HF_HOME",
		args: func(m model, port int32) []string {
			return []string{"--model-id", m.ref(), "--hostname", "0.0.0.0", "--port", itoa(port)}
		},
	},
	inferencev1alpha1.RuntimeSGLang: {
		Image: "lmsysorg/sglang:latest", Port: 30000, HealthPath: "/health",
		InFlightMetric: "sglang:num_running_reqs",
		Command:        []string{"python3", "-m", "sglang.launch_server"},
		CacheEnv:       "HF_HOME",
		StreamUsage:    true,
		args: func(m model, port int32) []string {
			return []string{"--model-path", m.ref(), "--host", "0.0.0.0", "--port", itoa(port), "--enable-metrics"}
		},
	},
	inferencev1alpha1.RuntimePersonaPlex: {
		Image: "ghcr.io/llmkube/personaplex:latest", Port: 8998, HealthPath: "/health",
		CacheEnv: "HF_HOME",
		args: func(m model, port int32) []string {
			return []string{"--model", m.ref(), "--host", "0.0.0.0", "--port", itoa(port)}
		},
	},
	inferencev1alpha1.RuntimeGeneric: {
		Port: 8080,
		args: func(model, int32) []string { return nil },
	},
}

// For returns what the operator knows about r; an empty runtime is llamacpp, the API's default.
func For(r inferencev1alpha1.Runtime) Runtime {
	if rt, ok := known[r]; ok {
		return rt
	}
	return known[inferencev1alpha1.RuntimeLlamaCPP]
}

// Args are the container arguments: spec.args when set, else the runtime's own, then
// spec.extraArgs.
func (rt Runtime) Args(spec *inferencev1alpha1.InferenceServiceSpec, port int32) []string {
	var out []string
	if spec.Args != nil {
		out = append(out, spec.Args...)
	} else {
		out = append(out, rt.args(parseSource(spec.Model.Source), port)...)
	}
	return append(out, spec.ExtraArgs...)
}

// ResolvedPort is the one port an InferenceService listens on: spec.containerPort, else
// spec.endpoint.port, else the runtime's default. The container port, probes, Service target port
// and scrape annotation all use it.
func ResolvedPort(spec *inferencev1alpha1.InferenceServiceSpec) int32 {
	if spec.ContainerPort != nil {
		return *spec.ContainerPort
	}
	if spec.Endpoint != nil && spec.Endpoint.Port != nil {
		return *spec.Endpoint.Port
	}
	return For(spec.Runtime).Port
}

// ServicePort is the port the Service exposes: spec.endpoint.port, else the resolved port.
func ServicePort(spec *inferencev1alpha1.InferenceServiceSpec) int32 {
	if spec.Endpoint != nil && spec.Endpoint.Port != nil {
		return *spec.Endpoint.Port
	}
	return ResolvedPort(spec)
}

// model is a parsed model source: exactly one of repo (with an optional file), url or path.
type model struct {
	repo, file, url, path string
}

// ref is the source as runtimes that take one model reference expect it: a repo id, a URL or a
// path.
func (m model) ref() string {
	switch {
	case m.repo != "" && m.file != "":
		return m.repo + "/" + m.file
	case m.repo != "":
		return m.repo
	case m.url != "":
		return m.url
	default:
		return m.path
	}
}

// parseSource reads a source that admission already validated: hf://org/repo[/file], https://...,
// /path, or org/repo.
func parseSource(s string) model {
	switch {
	case strings.HasPrefix(s, "hf://"):
		parts := strings.SplitN(strings.TrimPrefix(s, "hf://"), "/", 3)
		m := model{repo: strings.Join(parts[:min(2, len(parts))], "/")}
		if len(parts) == 3 {
			m.file = parts[2]
		}
		return m
	case strings.HasPrefix(s, "https://"):
		return model{url: s}
	case strings.HasPrefix(s, "/"):
		return model{path: s}
	default:
		return model{repo: s}
	}
}

func itoa(p int32) string { return strconv.Itoa(int(p)) }
