/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package modelrouter

import (
	"net/url"
	"strings"

	"k8s.io/utils/ptr"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
	inferencev1alpha1 "github.com/llmkube/operator/api/v1alpha1"
	"github.com/llmkube/operator/controllers/runtimes"
)

// azureStreamOptionsSince is the first Azure OpenAI api-version whose chat completions take
// stream_options (2024-09-01-preview; the first stable one is 2024-10-21). Older ones answer 400
// "Unrecognized request argument supplied: stream_options".
const azureStreamOptionsSince = "2024-09-01"

// StreamUsage decides whether the proxy asks backend b for a stream's usage
// (stream_options.include_usage, routingv1.Backend.StreamUsage). isvc is b's InferenceService
// (nil for an external backend).
//
// Note: Auto means "only where the backend is known to accept the field": a request the backend
// refuses with a 4xx is answered, so no fallback would save it, and every stream of the client
// would fail for a field it never sent. Not knowing is a no.
func StreamUsage(b *inferencev1alpha1.Backend, isvc *inferencev1alpha1.InferenceService) bool {
	switch ptr.Deref(b.StreamUsage, inferencev1alpha1.StreamUsageAuto) {
	case inferencev1alpha1.StreamUsageAlways:
		return true
	case inferencev1alpha1.StreamUsageNever:
		return false
	}
	switch {
	case b.External != nil:
		return providerAcceptsStreamUsage(b.External.Provider, b.External.URL)
	case isvc != nil:
		return runtimes.For(isvc.Spec.Runtime).StreamUsage
	}
	return false
}

// providerAcceptsStreamUsage says what each provider's documentation says of stream_options.
// openai-compatible is anything at all, so it is not known to.
func providerAcceptsStreamUsage(provider, rawURL string) bool {
	switch provider {
	case routingv1.ProviderOpenAI, routingv1.ProviderAnthropic:
		return true
	case routingv1.ProviderAzureOpenAI:
		u, err := url.Parse(rawURL)
		if err != nil {
			return false
		}
		v := u.Query().Get("api-version")
		if v == "" || v == "preview" || v == "latest" {
			// The v1 API (.../openai/v1) needs no dated version and follows OpenAI's.
			return strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/openai/v1")
		}
		// Dated versions are YYYY-MM-DD with an optional -preview: they compare as strings.
		return len(v) >= len(azureStreamOptionsSince) && v[:len(azureStreamOptionsSince)] >= azureStreamOptionsSince
	}
	return false
}
