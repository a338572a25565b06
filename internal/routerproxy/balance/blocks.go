/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package balance

import "sync"

// DefaultBlocksPerPod is how many block hashes the proxy remembers per pod when Pool.BlocksPerPod
// is zero: 16384 blocks of 128 bytes are 2 MiB of prompt text, about 500k tokens, the order of
// what one vLLM pod's KV cache holds on a large GPU. It costs about 40 to 60 bytes per block
// (TestBlocksMemory measures it): under 1 MiB per pod.
const DefaultBlocksPerPod = 16384

// blocks is what the proxy remembers a pod was sent: the block hashes of the prompts it got, as
// an LRU of at most a fixed number, standing in for the pod's prefix cache (which the proxy
// cannot see). The list is intrusive (indexes into entries) so that one block costs one entry
// and one map slot, and a full LRU allocates nothing more.
type blocks struct {
	mu      sync.Mutex
	index   map[uint64]int32
	entries []blockEntry
	head    int32 // most recently sent; -1 when empty
	tail    int32 // least recently sent
}

type blockEntry struct {
	hash       uint64
	prev, next int32 // toward head, toward tail; -1 at the ends
}

// match is how many of hashes, from the first, the pod was sent (and still remembers).
func (l *blocks) match(hashes []uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, h := range hashes {
		if _, ok := l.index[h]; !ok {
			return i
		}
	}
	return len(hashes)
}

// add remembers hashes as sent now, keeping at most capacity blocks.
//
// Note: the hashes go in last first, so that the first block of a prompt ends up the most
// recent. The LRU then forgets a prompt from its end, as a model server's cache evicts the
// blocks no later prompt built on: had the first block been forgotten first, the whole prefix
// would stop matching (matching stops at the first block missing) while its tail still took
// room.
func (l *blocks) add(hashes []uint64, capacity int) {
	if capacity < 1 || len(hashes) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.index == nil {
		l.index = map[uint64]int32{}
		l.head, l.tail = -1, -1
	}
	for i := len(hashes) - 1; i >= 0; i-- {
		h := hashes[i]
		if at, ok := l.index[h]; ok {
			l.unlink(at)
			l.pushFront(at)
			continue
		}
		var at int32
		if len(l.entries) < capacity {
			at = int32(len(l.entries))
			l.entries = append(l.entries, blockEntry{})
		} else {
			at = l.tail
			l.unlink(at)
			delete(l.index, l.entries[at].hash)
		}
		l.entries[at].hash = h
		l.index[h] = at
		l.pushFront(at)
	}
}

// len is the number of blocks remembered.
func (l *blocks) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.index)
}

func (l *blocks) unlink(at int32) {
	e := &l.entries[at]
	if e.prev >= 0 {
		l.entries[e.prev].next = e.next
	} else {
		l.head = e.next
	}
	if e.next >= 0 {
		l.entries[e.next].prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

func (l *blocks) pushFront(at int32) {
	e := &l.entries[at]
	e.prev, e.next = -1, l.head
	if l.head >= 0 {
		l.entries[l.head].prev = at
	}
	l.head = at
	if l.tail < 0 {
		l.tail = at
	}
}
