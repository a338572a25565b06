/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bufio"
	"bytes"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// newLineReader reads b for textproto (a part's header block, small).
func newLineReader(b []byte) *bufio.Reader { return bufio.NewReaderSize(bytes.NewReader(b), 512) }
