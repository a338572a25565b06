//go:build routerproxy_testseams

/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"flag"
	"log/slog"
	"net/http"

	"github.com/llmkube/operator/internal/routerproxy"
)

// The integration tests build the binary with -tags routerproxy_testseams (test/envtest): it then
// has --test-address-map. The production binary has no such flag.
func init() {
	addressMap := flag.String("test-address-map", "", "TESTS ONLY: FROM=TO,... dials a CIDR prefix or host name FROM at the loopback address TO (see routerproxy.AddressMap).")
	testSeams = func(t *http.Transport, log *slog.Logger) error {
		if *addressMap == "" {
			return nil
		}
		m, err := routerproxy.ParseAddressMap(*addressMap)
		if err != nil {
			return err
		}
		m.Apply(t)
		log.Warn("test address map in use: connections are redirected to loopback (tests only)", "map", *addressMap)
		return nil
	}
}
