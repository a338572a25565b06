/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	routingv1 "github.com/llmkube/operator/api/routing/v1"
)

// model is one entry of GET /v1/models.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelCatalog answers GET /v1/models: what a client can ask for. That is every exact model name
// of a rule with a resolved backend, in rule order, then the entries of each backend's own GET
// /v1/models that route to that backend (a prefix rule or the default route), de-duplicated.
// The backends' lists are kept for ttl; a backend that does not answer is left out until the
// next fetch, never an error.
type modelCatalog struct {
	rt  *routes
	ttl time.Duration

	mu      sync.Mutex
	fetched time.Time
	list    []model
	body    []byte
}

func newModelCatalog(rt *routes, ttl time.Duration) *modelCatalog {
	return &modelCatalog{rt: rt, ttl: ttl}
}

// modelsFetchTimeout bounds one backend's answer to GET /v1/models.
const modelsFetchTimeout = 5 * time.Second

// get is the current list and its JSON, fetching the backends' lists when the cache is stale.
// Concurrent callers wait for one fetch.
func (c *modelCatalog) get(ctx context.Context, p *Proxy) ([]model, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.body != nil && time.Since(c.fetched) < c.ttl {
		return c.list, c.body
	}
	doc := c.rt.doc
	var list []model
	seen := map[string]bool{}
	add := func(m model) {
		if !seen[m.ID] {
			seen[m.ID] = true
			list = append(list, m)
		}
	}
	for _, r := range doc.Rules {
		if c.rt.backends[r.Backend] == nil && !anyResolved(c.rt, r.Fallbacks) {
			continue
		}
		for _, m := range r.Models {
			if !strings.HasSuffix(m, "*") {
				add(model{ID: m, Object: "model", OwnedBy: r.Backend})
			}
		}
	}
	// The backends' own lists, fetched at once, added in document order.
	own := make([][]model, len(doc.Backends))
	var wg sync.WaitGroup
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), modelsFetchTimeout)
	defer cancel()
	for i, bd := range doc.Backends {
		b := c.rt.backends[bd.Name]
		wg.Go(func() { own[i] = p.backendModels(fctx, b) })
	}
	wg.Wait()
	for i, bd := range doc.Backends {
		for _, m := range own[i] {
			if route, ok := doc.Route(m.ID); ok && route.Backends[0] == bd.Name {
				add(model{ID: m.ID, Object: "model", Created: m.Created, OwnedBy: bd.Name})
			}
		}
	}
	if list == nil {
		list = []model{}
	}
	c.list = list
	c.body, _ = json.Marshal(map[string]any{"object": "list", "data": list})
	c.fetched = time.Now()
	return c.list, c.body
}

func anyResolved(rt *routes, names []string) bool {
	for _, n := range names {
		if rt.backends[n] != nil {
			return true
		}
	}
	return false
}

// backendModels is b's own GET /v1/models, nil when it does not answer with a list.
func (p *Proxy) backendModels(ctx context.Context, b *backend) []model {
	u := b.target("/v1/models", "")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil
	}
	requestHeaders(req.Header, http.Header{"Accept": {"application/json"}}, b)
	req.Header["User-Agent"] = nil
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		p.log.Debug("backend did not list its models", "backend", b.name, "error", err.Error())
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.CopyN(io.Discard, resp.Body, drainBytes)
		return nil
	}
	var out struct {
		Data []model `json:"data"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&out) != nil {
		return nil
	}
	return out.Data
}

// listModels answers GET /v1/models.
func (p *Proxy) listModels(w http.ResponseWriter, r *http.Request, x *exchange, rt *routes) {
	list, body := rt.models.get(r.Context(), p)
	if team := p.identifyTeam(rt, x); team != nil && len(team.Models) > 0 {
		body, _ = json.Marshal(map[string]any{"object": "list", "data": allowedModels(team, list)})
	}
	writeJSON(w, x, body)
}

// getModel answers GET /v1/models/{id}: the entry of the list, or 404.
func (p *Proxy) getModel(w http.ResponseWriter, r *http.Request, x *exchange, rt *routes, id string) {
	list, _ := rt.models.get(r.Context(), p)
	team := p.identifyTeam(rt, x)
	for _, m := range list {
		if m.ID == id && mayUse(team, id) == nil {
			body, _ := json.Marshal(m)
			writeJSON(w, x, body)
			return
		}
	}
	p.fail(w, x, invalidRequest(http.StatusNotFound, "model_not_found", "model", fmt.Sprintf("The model %q does not exist on this router.", id)), "")
}

func writeJSON(w http.ResponseWriter, x *exchange, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	x.status, x.bytes = http.StatusOK, int64(len(body))
	_, _ = w.Write(body)
}

// equalBackend reports whether two documents describe a backend alike.
func equalBackend(a, b routingv1.Backend) bool { return reflect.DeepEqual(a, b) }
