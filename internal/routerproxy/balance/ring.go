/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import (
	"hash/fnv"
	"slices"
	"strconv"
)

// pointsPerPod are each pod's places on the ring: enough that keys spread evenly over a few
// pods (the spread's deviation falls with the square root of the points).
const pointsPerPod = 128

// ring is a consistent-hash ring over pods' addresses.
//
// Note: the hash is FNV-1a, fixed (no per-process seed), so every replica of the proxy maps a key
// to the same pod for the same pod set, and a pod joining or leaving moves only the keys next to
// its points.
type ring struct {
	hashes []uint64 // sorted
	owners []*Endpoint
}

func newRing(eps []*Endpoint) ring {
	type point struct {
		h uint64
		e *Endpoint
	}
	pts := make([]point, 0, len(eps)*pointsPerPod)
	for _, e := range eps {
		for i := range pointsPerPod {
			pts = append(pts, point{Hash([]byte(e.Addr + "#" + strconv.Itoa(i))), e})
		}
	}
	slices.SortFunc(pts, func(a, b point) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	r := ring{hashes: make([]uint64, len(pts)), owners: make([]*Endpoint, len(pts))}
	for i, p := range pts {
		r.hashes[i], r.owners[i] = p.h, p.e
	}
	return r
}

// walk visits the pods clockwise from key, each once, and returns the first that ok accepts.
func (r ring) walk(key uint64, ok func(*Endpoint) bool) *Endpoint {
	n := len(r.hashes)
	if n == 0 {
		return nil
	}
	start, _ := slices.BinarySearch(r.hashes, key)
	seen := map[*Endpoint]bool{}
	for i := range n {
		e := r.owners[(start+i)%n]
		if seen[e] {
			continue
		}
		seen[e] = true
		if ok(e) {
			return e
		}
	}
	return nil
}

// Hash is the ring's hash of b: FNV-1a (64 bits), then murmur3's finalizer, so that inputs
// differing in their last byte (a pod's point numbers) still land far apart on the ring.
func Hash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
