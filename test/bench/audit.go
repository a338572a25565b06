/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// auditLog is the API server's audit log of one user: every request that user sends, as the API
// server saw it (verb, resource, answer), whatever client sent it.
//
// Note: the peer comparison counts two different operators, and only the API server sees both
// the same way; a count at the client would need each operator's own instrumentation, and
// apiserver_request_total has no user label.
type auditLog struct {
	policy, path string
}

// newAuditLog writes into dir a policy that records user's requests at level Metadata (no
// bodies), once each when its answer is complete (a watch: when it starts, too), and nothing of
// any other user.
func newAuditLog(dir, user string) (*auditLog, error) {
	a := &auditLog{policy: filepath.Join(dir, "audit-policy.yaml"), path: filepath.Join(dir, "audit.log")}
	policy := fmt.Sprintf(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: [%q]
- level: None
`, user)
	return a, os.WriteFile(a.policy, []byte(policy), 0o600)
}

// auditEvent is one request of the audit log.
type auditEvent struct {
	// Key is "VERB resource[/subresource]" as the benchmark's other counts name requests: POST,
	// GET, LIST, PUT, PATCH, APPLY (a patch with force, which only an apply may carry), DELETE.
	Key  string
	Code int
	At   time.Time
}

// write is whether the request can change something (not a GET, LIST or WATCH).
func (e auditEvent) write() bool {
	v, _, _ := strings.Cut(e.Key, " ")
	return v != "GET" && v != "LIST" && v != "WATCH"
}

// offset is where the log ends now: events after it are those of a window opened now.
func (a *auditLog) offset() int64 {
	st, err := os.Stat(a.path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// since reads the events written after offset from, and the offset it read to (the last
// complete line).
func (a *auditLog) since(from int64) ([]auditEvent, int64, error) {
	f, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return nil, from, nil
	}
	if err != nil {
		return nil, from, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, from, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var out []auditEvent
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return out, from, nil // a partial last line is read next time
		}
		if err != nil {
			return out, from, err
		}
		from += int64(len(line))
		if e, ok := parseAuditLine(line); ok {
			out = append(out, e)
		}
	}
}

// parseAuditLine reads one event of the log; requests that are not on a resource are left out.
func parseAuditLine(line []byte) (auditEvent, bool) {
	var ev struct {
		Stage      string `json:"stage"`
		Verb       string `json:"verb"`
		RequestURI string `json:"requestURI"`
		ObjectRef  *struct {
			Resource    string `json:"resource"`
			Subresource string `json:"subresource"`
		} `json:"objectRef"`
		ResponseStatus *struct {
			Code int `json:"code"`
		} `json:"responseStatus"`
		StageTimestamp time.Time `json:"stageTimestamp"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
		return auditEvent{}, false
	}
	// A watch, long-running, is recorded when it starts (an informer's list is a watch that
	// sends its initial events first) and again when it ends: it counts once, at its start.
	if ev.Verb == "watch" && ev.Stage != "ResponseStarted" {
		return auditEvent{}, false
	}
	verb := map[string]string{"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST", "update": "PUT",
		"patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE"}[ev.Verb]
	if verb == "" {
		verb = strings.ToUpper(ev.Verb)
	}
	if verb == "PATCH" && strings.Contains(ev.RequestURI, "force=") {
		verb = "APPLY"
	}
	res := ev.ObjectRef.Resource
	if ev.ObjectRef.Subresource != "" {
		res += "/" + ev.ObjectRef.Subresource
	}
	e := auditEvent{Key: verb + " " + res, At: ev.StageTimestamp}
	if ev.ResponseStatus != nil {
		e.Code = ev.ResponseStatus.Code
	}
	return e, true
}

// auditCounts are the requests answered after after and until until, by key, without WATCH;
// notFound are those of them the API server answered 404.
func auditCounts(events []auditEvent, after, until time.Time) (requests, notFound map[string]int) {
	requests, notFound = map[string]int{}, map[string]int{}
	for _, e := range events {
		if strings.HasPrefix(e.Key, "WATCH ") || !e.At.After(after) || e.At.After(until) {
			continue
		}
		requests[e.Key]++
		if e.Code == 404 {
			notFound[e.Key]++
		}
	}
	return requests, notFound
}
