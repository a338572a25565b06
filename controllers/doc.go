/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package controllers holds one package per kind plus the shared layers below them; the RBAC
// markers of the whole operator live beside the reconcilers that need them.
package controllers
