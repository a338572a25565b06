/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package prefix

import (
	"encoding/binary"
	"hash/maphash"
)

// Defaults of the proxy's flags (README: docs/router-balancing.md).
const (
	// DefaultBlockBytes is 128 bytes of prompt text: about 32 tokens of English, two of vLLM's
	// 16-token KV blocks. Smaller blocks find a cached prefix a little more exactly but cost more
	// hashes per request and more memory per pod for the same prompt length.
	DefaultBlockBytes = 128
	// DefaultMaxBlocks bounds the blocks hashed per request: 1024 blocks of 128 bytes are the first
	// 128 KiB of a prompt's text (about 32k tokens). Prompts that agree that far are treated as
	// one; a larger prompt costs no more to hash.
	DefaultMaxBlocks = 1024
)

// Hasher cuts prompt text into blocks of BlockBytes bytes and chain-hashes them, at most
// MaxBlocks per prompt. A trailing part shorter than a block is not hashed: a pod's KV cache
// reuses whole blocks only, and a prompt shorter than one block has nothing worth steering for.
//
// Note: the hash is hash/maphash with a seed drawn when the Hasher is made, so it changes with
// every start of the proxy. That is enough, because the hashes are compared only with the ones
// the same process remembered (the pods' block lists start empty at a restart, as nothing else
// persists them), and it keeps clients from crafting a prompt whose blocks collide with another
// tenant's to steer where that tenant's requests go. maphash is also several times faster than
// FNV on long prompts.
type Hasher struct {
	BlockBytes int
	MaxBlocks  int
	seed       maphash.Seed
}

// NewHasher is a Hasher with its own seed; blockBytes and maxBlocks below 1 take the defaults.
func NewHasher(blockBytes, maxBlocks int) *Hasher {
	if blockBytes < 1 {
		blockBytes = DefaultBlockBytes
	}
	if maxBlocks < 1 {
		maxBlocks = DefaultMaxBlocks
	}
	return &Hasher{BlockBytes: blockBytes, MaxBlocks: maxBlocks, seed: maphash.MakeSeed()}
}

// chain is the hashing of one prompt in progress: text is written to it in pieces of any size.
type chain struct {
	h      maphash.Hash
	size   int // block size
	n      int // bytes of the current block written so far
	max    int
	blocks []uint64
}

// start begins a chain whose first hash also covers kind and model: the same text sent as a chat
// and as a completion, or to two models, shares no block.
func (h *Hasher) start(kind, model string, sizeHint int) *chain {
	c := &chain{size: h.BlockBytes, max: h.MaxBlocks}
	c.blocks = make([]uint64, 0, min(h.MaxBlocks, sizeHint/h.BlockBytes+1))
	c.h.SetSeed(h.seed)
	c.h.WriteString(kind)
	c.h.WriteByte(0)
	c.h.WriteString(model)
	c.h.WriteByte(0)
	return c
}

// full reports whether the chain has all the blocks it may take.
func (c *chain) full() bool { return len(c.blocks) >= c.max }

// write adds text; each time a block fills up, its hash (of the previous hash and the block) is
// appended and the next block starts from it.
func (c *chain) write(p []byte) {
	for len(p) > 0 && !c.full() {
		k := min(c.size-c.n, len(p))
		c.h.Write(p[:k])
		c.n += k
		p = p[k:]
		if c.n == c.size {
			sum := c.h.Sum64()
			c.blocks = append(c.blocks, sum)
			c.h.Reset()
			var prev [8]byte
			binary.LittleEndian.PutUint64(prev[:], sum)
			c.h.Write(prev[:])
			c.n = 0
		}
	}
}

func (c *chain) writeString(s string) { c.write([]byte(s)) }

// result is the blocks, nil when the text did not fill one.
func (c *chain) result() []uint64 {
	if len(c.blocks) == 0 {
		return nil
	}
	return c.blocks
}
