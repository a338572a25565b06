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
	// NoServiceLinks turns off the Service variables Kubernetes injects: vLLM reads VLLM_PORT
	// (and any VLLM_*) as its own settings, so the Service of an InferenceService named vllm
	// would reconfigure it.
	NoServiceLinks bool
	// args adds the arguments that load source and listen on port at host.
	args func(f *flags, m model, port, host string)
	// derive adds the flags of the spec's runtime settings and of the pod's GPUs; nil for none.
	derive func(f *flags, spec *inferencev1alpha1.InferenceServiceSpec, hw Hardware)
}

var known = map[inferencev1alpha1.Runtime]Runtime{
	inferencev1alpha1.RuntimeLlamaCPP: {
		Image: "ghcr.io/ggml-org/llama.cpp:server", Port: 8080, HealthPath: "/health",
		InFlightMetric: "llamacpp:requests_processing",
		CacheEnv:       "LLAMA_CACHE",
		StreamUsage:    true,
		args: func(f *flags, m model, port, host string) {
			f.add(f.hostField, names("--host"), host)
			f.add("", names("--port"), port)
			f.add("", names("--metrics"))
			switch {
			case m.repo != "" && m.file != "":
				f.out = append(f.out, "--hf-repo", m.repo, "--hf-file", m.file)
			case m.repo != "":
				f.out = append(f.out, "--hf-repo", m.repo)
			case m.url != "":
				f.out = append(f.out, "--model-url", m.url)
			default:
				f.out = append(f.out, "--model", m.path)
			}
		},
		derive: llamaCPPFlags,
	},
	inferencev1alpha1.RuntimeVLLM: {
		Image: "vllm/vllm-openai:latest", Port: 8000, HealthPath: "/health",
		InFlightMetric: "vllm:num_requests_running",
		CacheEnv:       "HF_HOME",
		StreamUsage:    true,
		NoServiceLinks: true,
		args: func(f *flags, m model, port, host string) {
			f.out = append(f.out, "--model", m.ref())
			f.add(f.hostField, names("--host"), host)
			f.add("", names("--port"), port)
		},
		derive: vllmFlags,
	},
	inferencev1alpha1.RuntimeTGI: {
		Image: "ghcr.io/huggingface/text-generation-inference:latest", Port: 80, HealthPath: "/health",
		InFlightMetric: "tgi_batch_current_size",
		CacheEnv:       "HF_HOME",
		args: func(f *flags, m model, port, host string) {
			f.out = append(f.out, "--model-id", m.ref())
			f.add(f.hostField, names("--hostname"), host)
			f.add("", names("--port", "-p"), port)
		},
		derive: tgiFlags,
	},
	inferencev1alpha1.RuntimeSGLang: {
		Image: "lmsysorg/sglang:latest", Port: 30000, HealthPath: "/health",
		InFlightMetric: "sglang:num_running_reqs",
		Command:        []string{"python3", "-m", "sglang.launch_server"},
		CacheEnv:       "HF_HOME",
		StreamUsage:    true,
		args: func(f *flags, m model, port, host string) {
			f.out = append(f.out, "--model-path", m.ref())
			f.add(f.hostField, names("--host"), host)
			f.add("", names("--port"), port)
			f.add("", names("--enable-metrics"))
		},
		derive: sglangFlags,
	},
	inferencev1alpha1.RuntimePersonaPlex: {
		Image: "ghcr.io/llmkube/personaplex:latest", Port: 8998, HealthPath: "/health",
		CacheEnv: "HF_HOME",
		args: func(f *flags, m model, port, host string) {
			f.out = append(f.out, "--model", m.ref())
			f.add(f.hostField, names("--host"), host)
			f.add("", names("--port"), port)
		},
	},
	inferencev1alpha1.RuntimeGeneric: {
		Port: 8080,
		args: func(*flags, model, string, string) {},
	},
}

// For returns what the operator knows about r; an empty runtime is llamacpp, the API's default.
func For(r inferencev1alpha1.Runtime) Runtime {
	if rt, ok := known[r]; ok {
		return rt
	}
	return known[inferencev1alpha1.RuntimeLlamaCPP]
}

// Args are the container arguments: spec.args when set, else the runtime's own (the model source,
// the address and port, then the flags of the spec's runtime settings and of hw's GPUs), then
// spec.extraArgs. A flag extraArgs sets is not derived a second time: overridden lists the fields
// whose flag extraArgs replaced, so the plan can say so.
func (rt Runtime) Args(spec *inferencev1alpha1.InferenceServiceSpec, port int32, hw Hardware) (args []string, overridden []Override) {
	if spec.Args != nil {
		return append(append([]string(nil), spec.Args...), spec.ExtraArgs...), nil
	}
	f := &flags{user: spec.ExtraArgs}
	if spec.BindAddress != "" {
		f.hostField = "spec.bindAddress"
	}
	rt.args(f, parseSource(spec.Model.Source), itoa(port), bindAddress(spec))
	if rt.derive != nil {
		rt.derive(f, spec, hw)
	}
	if len(f.out) == 0 && len(spec.ExtraArgs) == 0 {
		return nil, nil
	}
	return append(f.out, spec.ExtraArgs...), f.override
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
