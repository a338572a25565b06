/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// credentials are what a backend's credentials Secret makes an attempt send. A backend holds
// them behind an atomic pointer: a rotation swaps them for the attempts that start from then on,
// and a stream already under way keeps the connection it opened with the old key.
type credentials struct {
	// header and value are the credential header, empty without a key.
	header, value string
	// organization and project are sent as OpenAI-Organization and OpenAI-Project (the Secret's
	// optional ORGANIZATION and PROJECT keys), never the client's.
	organization, project string
	// missing names where the API key should have been, when it was not.
	missing string
}

func newCredentials(provider, key, organization, project, where string) *credentials {
	c := &credentials{organization: strings.TrimSpace(organization), project: strings.TrimSpace(project)}
	switch key = strings.TrimSpace(key); {
	case key == "":
		// Not fatal: the other backends still serve; this one's API answers 401 and the log says why.
		c.missing = where
	case provider == routingv1.ProviderAzureOpenAI:
		c.header, c.value = "Api-Key", key
	default:
		c.header, c.value = "Authorization", "Bearer "+key
	}
	return c
}

// readCredentials reads a backend's credentials Secret mounted at dir (the operator projects its
// API_KEY, ORGANIZATION and PROJECT keys there). A missing file is a missing key; any other
// failure is an error, and the caller keeps what it had.
func readCredentials(dir, provider string) (*credentials, error) {
	var v [3]string
	for i, k := range []string{routingv1.CredentialsKey, routingv1.CredentialsOrganizationKey, routingv1.CredentialsProjectKey} {
		data, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		v[i] = string(data)
	}
	return newCredentials(provider, v[0], v[1], v[2], filepath.Join(dir, routingv1.CredentialsKey)), nil
}

// credentialsOf is where the document says b's credentials are: the mounted Secret under
// Options.CredentialsDir, or (a document of an older operator) the environment.
func (p *Proxy) credentialsOf(b routingv1.Backend) (*credentials, error) {
	switch {
	case b.Credentials && p.o.CredentialsDir != "":
		return readCredentials(filepath.Join(p.o.CredentialsDir, b.Name), b.Provider)
	case b.Credentials:
		return newCredentials(b.Provider, "", "", "", "--credentials-dir (not set)"), nil
	case b.CredentialsEnvPrefix != "":
		e := func(k string) string { return p.o.Getenv(b.CredentialsEnvPrefix + k) }
		return newCredentials(b.Provider, e(routingv1.CredentialsKey), e(routingv1.CredentialsOrganizationKey), e(routingv1.CredentialsProjectKey), b.CredentialsEnvPrefix+routingv1.CredentialsKey), nil
	}
	return &credentials{}, nil
}

// watchCredentials rereads the mounted credentials of the backends new requests go to, every
// Options.CredentialsRefresh until ctx ends.
//
// Note: the kubelet updates a mounted Secret in place (an atomic swap of its ..data symlink) and
// never a container's environment, which is why the operator mounts credentials rather than
// passing them by envFrom: a rotated key is sent within the kubelet's sync plus one interval,
// without a restart and so without cutting a stream.
func (p *Proxy) watchCredentials(ctx context.Context) {
	t := time.NewTicker(p.o.CredentialsRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, b := range p.routes.Load().backends {
				if b.def.Credentials {
					p.refreshCredentials(b)
				}
			}
		}
	}
}

// refreshCredentials rereads b's credentials, saying once per change what happened.
//
// Note: a backend's directory that is gone (or is no directory) is a failed reread, not a key
// removed: the kubelet swaps a mounted Secret's files in place and never removes the directory,
// so its absence means a mount that cannot be read, and the previous key keeps serving. At start
// (prepare) a missing directory is a Secret without a key, as before.
func (p *Proxy) refreshCredentials(b *backend) {
	var err error
	if b.def.Credentials && p.o.CredentialsDir != "" {
		var fi os.FileInfo
		if fi, err = os.Stat(filepath.Join(p.o.CredentialsDir, b.name)); err == nil && !fi.IsDir() {
			err = errors.New(fi.Name() + " is not a directory")
		}
	}
	var c *credentials
	if err == nil {
		c, err = p.credentialsOf(b.def)
	}
	if err != nil {
		if err.Error() != b.credErr {
			b.credErr = err.Error()
			p.log.Warn("rereading a backend's credentials failed; keeping the previous ones", "backend", b.name, "error", b.credErr)
		}
		return
	}
	b.credErr = ""
	if *c == *b.creds.Load() {
		return
	}
	b.creds.Store(c)
	if c.missing != "" {
		p.warnMissingKey(b.name, c.missing)
		return
	}
	p.log.Info("backend credentials reloaded: new requests send them", "backend", b.name)
}

func (p *Proxy) warnMissingKey(backend, where string) {
	p.log.Warn("backend has a credentials Secret without an API key: its requests go without one", "backend", backend, "key", where)
}
