/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// AddressMap is a test seam, never for production: the integration tests run the proxy outside a
// cluster, where EndpointSlices cannot hold the loopback addresses their stand-in pods listen on
// (the API server refuses them). The tests put TEST-NET-1 addresses (192.0.2.0/24) in the
// slices, and this map makes the proxy's dialer connect to a loopback address instead, same port.
// Everything before the dial (the pick, the URL, the Host header) is what it is in a cluster.
type AddressMap struct {
	rules []addressRule
}

type addressRule struct {
	prefix netip.Prefix // or
	host   string       // an exact host name (a Service's DNS name)
	to     string
}

// ParseAddressMap reads "FROM=TO,FROM=TO": FROM a CIDR prefix or a host name, TO a loopback IP.
func ParseAddressMap(s string) (*AddressMap, error) {
	m := &AddressMap{}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		from, to, ok := strings.Cut(item, "=")
		ip, err := netip.ParseAddr(to)
		if !ok || err != nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("test address map entry %q: want FROM=TO with TO a loopback address", item)
		}
		r := addressRule{to: to}
		if p, err := netip.ParsePrefix(from); err == nil {
			r.prefix = p
		} else {
			r.host = from
		}
		m.rules = append(m.rules, r)
	}
	return m, nil
}

// Map is addr (host:port) with its host replaced when a rule matches.
func (m *AddressMap) Map(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	ip, ipErr := netip.ParseAddr(host)
	for _, r := range m.rules {
		if (r.host != "" && r.host == host) || (ipErr == nil && r.prefix.IsValid() && r.prefix.Contains(ip)) {
			return net.JoinHostPort(r.to, port)
		}
	}
	return addr
}

// Apply makes t dial through the map.
func (m *AddressMap) Apply(t *http.Transport) {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dial(ctx, network, m.Map(addr))
	}
}
