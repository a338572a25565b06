/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package prefix turns a request's prompt into the chain of block hashes the router proxy's
// prefix scorer compares (internal/routerproxy/balance): the prompt's text (a chat request's
// messages with their roles, a completion's prompt, a Responses request's instructions and input)
// is cut into fixed-size blocks, and each block's hash covers the previous block's hash and the
// block, so two prompts share their first n hashes exactly when they share their first n blocks.
//
// It reads JSON that has already been validated (the proxy's scanBody) and decodes strings as it
// walks them: no string of the prompt is ever held in memory, and the walk stops once the hasher
// has taken its maximum number of blocks.
package prefix
