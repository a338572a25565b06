/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package release assembles what a release publishes, without a Docker daemon: the operator and
// router-proxy images (an OCI index over static binaries on a base), a base image made from local
// files for machines that cannot pull one, and the kubectl plugin's archives with the krew manifest.
//
// Note: every output is a function of its inputs and one timestamp (the commit's time), never of
// the clock, the user or the file system's order, so two builds of one commit give the same digests.
package release
