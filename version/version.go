/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package version is the version of this build of the operator and the router proxy.
package version

// Version is the release this build belongs to; release builds set it with
// -ldflags "-X github.com/llmkube/operator/version.Version=<tag>". It names the default
// router-proxy image, so it matches the chart's appVersion (test/chart checks that).
var Version = "0.1.0"
