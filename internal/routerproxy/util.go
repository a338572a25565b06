/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import "strconv"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
