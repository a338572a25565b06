/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// keyring holds the API keys clients must present, read from a mounted Secret: one file per key
// of the Secret, the file's content a key. The kubelet replaces the files in place when the Secret
// changes, and the keyring rereads them, so a rotated key works without a restart.
type keyring struct {
	dir  string
	keys atomic.Pointer[[]clientKey]
}

// clientKey is one key of the Secret: its name (the Secret's data key, which spec.clients names)
// and the SHA-256 of its value.
type clientKey struct {
	name string
	sum  [sha256.Size]byte
}

func newKeyring(dir string) (*keyring, error) {
	k := &keyring{dir: dir}
	if err := k.reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// reload reads every key file of the directory. Names starting with a dot are the kubelet's
// bookkeeping (..data and the timestamped directory), not keys.
func (k *keyring) reload() error {
	entries, err := os.ReadDir(k.dir)
	if err != nil {
		return fmt.Errorf("client API keys: %w", err)
	}
	keys := make([]clientKey, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(k.dir, e.Name())
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("client API keys: %w", err)
		}
		if v := strings.TrimSpace(string(data)); v != "" {
			keys = append(keys, clientKey{name: e.Name(), sum: sha256.Sum256([]byte(v))})
		}
	}
	k.keys.Store(&keys)
	return nil
}

// watch rereads the keys every interval until ctx ends; a failed read keeps the keys it had.
func (k *keyring) watch(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := k.reload(); err != nil {
				log.Warn("rereading client API keys failed; keeping the previous ones", "error", err)
			}
		}
	}
}

// identify reports whether h carries one of the keys, where the OpenAI, Azure and Anthropic SDKs
// put it: Authorization with the Bearer scheme in any case (RFC 9110 section 11.1), or api-key,
// or x-api-key, and the name of the key it carries (spec.clients knows a client by it). An empty
// keyring allows nothing.
//
// Note: the comparison is of SHA-256 sums, in constant time, over every key: neither the length
// nor the position of a key, nor how much of a guess matched, shows in the time taken (the
// matching key's name is picked with a constant-time select, not a branch).
func (k *keyring) identify(h http.Header) (string, bool) {
	var token string
	if scheme, rest, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "Bearer") {
		token = strings.TrimSpace(rest)
	} else if v := h.Get("Api-Key"); v != "" {
		token = strings.TrimSpace(v)
	} else {
		token = strings.TrimSpace(h.Get("X-Api-Key"))
	}
	sum := sha256.Sum256([]byte(token))
	match, at := 0, 0
	keys := *k.keys.Load()
	for i, key := range keys {
		eq := subtle.ConstantTimeCompare(sum[:], key.sum[:])
		match |= eq
		at = subtle.ConstantTimeSelect(eq, i, at)
	}
	if token == "" || match != 1 {
		return "", false
	}
	return keys[at].name, true
}

func (k *keyring) count() int { return len(*k.keys.Load()) }
