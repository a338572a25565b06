/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/llmkube/operator/internal/routerproxy/jsonwalk"
)

// requestBody is what the proxy needs from a request body: the model, where its value sits (to
// rewrite it without re-encoding the rest), whether the client asked for a stream, and where the
// values prefix affinity hashes sit (messages, prompt, input, instructions). Spans are offsets into the body: nothing
// of the body is copied.
type requestBody struct {
	model      string
	modelStart int
	modelEnd   int
	stream     bool
	// messages, prompt, input and instructions are the spans of those top-level values, [0,0)
	// when absent (prefix scoring reads them: affinity.go).
	messagesStart, messagesEnd         int
	promptStart, promptEnd             int
	inputStart, inputEnd               int
	instructionsStart, instructionsEnd int
	// form says the body is multipart/form-data: the model span is the bare text of its model
	// field, which a rewrite replaces with the bare name (form.go).
	form bool
	// maxTokens is the client's max_tokens (or max_completion_tokens, max_output_tokens): the
	// output part of a token limit's reservation (limiting.go); 0 when unset.
	maxTokens int64
	// generates says the request's endpoint generates text (chat, completions, responses): its
	// token reservation counts an output without max_tokens too (limiting.go).
	generates bool
	// usageEdit, when set, makes the upstream stream report usage (stream_options.include_usage)
	// for a client that did not ask for it; relay then hides the usage-only chunk (usage.go).
	usageEdit *edit
}

// edit replaces body[start:end] with text (an insertion when start == end).
type edit struct {
	start, end int
	text       []byte
}

// Memory: a request body is held once, in the buffer readBody fills; everything else (the scan,
// the model rewrite, the affinity key) works on offsets into it. make bench-proxy measures it.

// readBody reads the whole body into one buffer that grows with what arrives, within what hold
// holds of the body budget (a body of unknown length takes more as it grows; 503 when it cannot).
//
// Note: the buffer doubles from 64 KiB and never past the declared Content-Length nor the limit
// (nextBodyBuffer): it follows the bytes that arrived, and goes to the length a client declared
// only once a quarter of it arrived, so a client that declares 32 MiB and sends 1 MiB makes the
// proxy hold 2 MiB at most. An honest body leaves at most its own size behind in smaller buffers for the
// collector (DefaultBodyBudget counts that).
//
// The read deadline (set by proxy) is left in place when the body fails: net/http then gives up
// on the rest of it at once instead of draining it with no deadline, and the connection closes.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request, hold *bodyHold) ([]byte, *apiError) {
	src := http.MaxBytesReader(w, r.Body, p.o.MaxBodyBytes)
	size := int64(firstBodyBuffer)
	if r.ContentLength >= 0 && r.ContentLength < size {
		size = r.ContentLength
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) && int64(len(buf)) == r.ContentLength {
			// The declared length arrived: one more read sees the end without a larger buffer.
			var one [1]byte
			n, err := src.Read(one[:])
			if n > 0 {
				w.Header().Set("Connection", "close")
				return nil, invalidRequest(http.StatusBadRequest, "invalid_body", "", "The request body is longer than its Content-Length.")
			}
			if err == nil {
				continue
			}
			if err == io.EOF {
				_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
				return buf, nil
			}
			return nil, p.bodyFailed(w, err)
		}
		if len(buf) == cap(buf) {
			next := nextBodyBuffer(int64(cap(buf)), r.ContentLength, p.o.MaxBodyBytes)
			if !hold.cover(next) {
				w.Header().Set("Connection", "close") // the rest of the body stays unread
				return nil, p.overloaded(w)
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
			return buf, nil
		}
		if err != nil {
			return nil, p.bodyFailed(w, err)
		}
	}
}

// bodyFailed is the answer to a body whose read failed: too large, too slow, or cut.
func (p *Proxy) bodyFailed(w http.ResponseWriter, err error) *apiError {
	var tooBig *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooBig):
		return p.tooLarge()
	case errors.As(err, &netErr) && netErr.Timeout():
		p.clients.timeouts.WithLabelValues(phaseBody).Inc()
		w.Header().Set("Connection", "close")
		return invalidRequest(http.StatusRequestTimeout, "request_timeout", "", "The request body did not arrive within "+p.o.BodyReadTimeout.String()+" (--body-read-timeout).")
	default:
		w.Header().Set("Connection", "close")
		return invalidRequest(http.StatusBadRequest, "invalid_body", "", "Reading the request body failed: "+err.Error())
	}
}

// firstBodyBuffer is the buffer a body of unknown or larger length starts with.
const firstBodyBuffer = 64 << 10

// nextBodyBuffer is the size a full buffer of size c grows to: double, but never past the
// declared length cl (when known, >= 0: the buffer then ends at exactly cl, and readBody sees the
// end with a read of one byte beside it) nor the limit (+1: room to see the end); the declared
// length at once when it is at most four times what arrived.
//
// Note: each doubling leaves the smaller buffer to the collector, about the body's size in all,
// and with 16 concurrent 4 MiB prompts that garbage set the peak RSS (make bench-proxy: 111 to
// 124 MiB here, 135 to 156 MiB on a loaded machine, against a budget of 136). Going to the
// declared length from a quarter of it leaves a quarter as much (1 MiB, not 4, for a 4 MiB
// prompt: 106 to 109 MiB), while a client still has to send a quarter of a length to make the
// proxy hold it. A body of a power of two also used to fill its buffer and grow once more, to
// 4 MiB + 1, only to see its end: a copy of the whole body.
func nextBodyBuffer(c, cl, limit int64) int64 {
	bound := limit + 1
	if cl >= 0 && cl <= limit {
		bound = cl
		if bound <= 4*c {
			return bound
		}
	}
	return max(min(2*c, bound), c+1)
}

func (p *Proxy) tooLarge() *apiError {
	return invalidRequest(http.StatusRequestEntityTooLarge, "request_too_large", "", "The request body is larger than this router's limit of "+itoa(p.o.MaxBodyBytes)+" bytes.")
}

// scanBody reads the top level of a JSON object body.
//
// Note: it keeps the body's bytes as they are (field order, numbers, unknown fields) and only
// finds the offsets of "model" (and of messages and prompt), so a rewrite changes that value and
// nothing else. The body is checked by encoding/json (which allocates nothing for values it
// skips), then walked by offsets. A duplicated "model" is refused: parsers disagree on which one
// wins, and the proxy must route by the one the backend reads.
func scanBody(body []byte) (requestBody, *apiError) {
	var rb requestBody
	malformed := func(err error) (requestBody, *apiError) {
		return rb, invalidRequest(http.StatusBadRequest, "invalid_json", "", "We could not parse the JSON body of your request: "+err.Error())
	}
	i := jsonwalk.SkipSpace(body, 0)
	if i == len(body) {
		return malformed(errors.New("unexpected end of JSON input"))
	}
	if body[i] != '{' {
		if !json.Valid(body) {
			return malformed(syntaxError(body))
		}
		return malformed(errors.New("the body must be a JSON object"))
	}
	if !json.Valid(body) {
		return malformed(syntaxError(body))
	}
	seenModel := false
	bodyStart, soStart, soEnd := i, -1, -1
	i++
	for {
		i = jsonwalk.SkipSpace(body, i)
		if body[i] == '}' {
			break
		}
		if body[i] == ',' {
			i = jsonwalk.SkipSpace(body, i+1)
		}
		keyEnd := jsonwalk.SkipString(body, i)
		key := body[i:keyEnd]
		i = jsonwalk.SkipSpace(body, keyEnd) + 1 // the colon
		start := jsonwalk.SkipSpace(body, i)
		end := jsonwalk.SkipValue(body, start)
		i = end
		raw := body[start:end]
		switch keyName(key) {
		case "model":
			if seenModel {
				return rb, invalidRequest(http.StatusBadRequest, "invalid_value", "model", "The request sets model more than once.")
			}
			seenModel = true
			if raw[0] != '"' || json.Unmarshal(raw, &rb.model) != nil {
				return rb, invalidRequest(http.StatusBadRequest, "invalid_type", "model", "model must be a string.")
			}
			rb.modelStart, rb.modelEnd = start, end
		case "stream":
			rb.stream = string(raw) == "true"
		case "messages":
			rb.messagesStart, rb.messagesEnd = start, end
		case "prompt":
			rb.promptStart, rb.promptEnd = start, end
		case "input":
			rb.inputStart, rb.inputEnd = start, end
		case "instructions":
			rb.instructionsStart, rb.instructionsEnd = start, end
		case "stream_options":
			soStart, soEnd = start, end
		case "max_tokens":
			_ = json.Unmarshal(raw, &rb.maxTokens) // a non-integer is the backend's to refuse
		}
	}
	rb.usageEdit = usageEdit(body, bodyStart, soStart, soEnd)
	if !seenModel || rb.model == "" {
		return rb, invalidRequest(http.StatusBadRequest, "missing_required_parameter", "model", "You must provide a model parameter.")
	}
	return rb, nil
}

// syntaxError is encoding/json's message for an invalid body (the decoder says where).
func syntaxError(body []byte) error {
	var v struct{}
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// keyName is a quoted key's text; only a key with escapes is decoded.
func keyName(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		switch string(quoted[1 : len(quoted)-1]) { // no allocation for the names that matter
		case "model":
			return "model"
		case "stream":
			return "stream"
		case "messages":
			return "messages"
		case "prompt":
			return "prompt"
		case "input":
			return "input"
		case "instructions":
			return "instructions"
		case "stream_options":
			return "stream_options"
		case "include_usage":
			return "include_usage"
		case "max_tokens", "max_completion_tokens", "max_output_tokens":
			return "max_tokens"
		}
		return ""
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

// usageEdit is the edit that asks the upstream for a stream's usage when the client did not:
// stream_options.include_usage set to true, inserted at the top level (brace is the offset of the
// body's '{') or into the client's stream_options object. nil when the client set include_usage
// itself (a false is its choice too), or its stream_options is not an object.
func usageEdit(body []byte, brace, soStart, soEnd int) *edit {
	if soStart < 0 {
		return &edit{start: brace + 1, end: brace + 1, text: []byte(`"stream_options":{"include_usage":true},`)}
	}
	if body[soStart] != '{' {
		return nil
	}
	i := jsonwalk.SkipSpace(body, soStart+1)
	if body[i] == '}' {
		return &edit{start: i, end: i, text: []byte(`"include_usage":true`)}
	}
	for i < soEnd && body[i] != '}' {
		if body[i] == ',' {
			i = jsonwalk.SkipSpace(body, i+1)
		}
		keyEnd := jsonwalk.SkipString(body, i)
		key := keyName(body[i:keyEnd])
		i = jsonwalk.SkipSpace(body, keyEnd) + 1
		start := jsonwalk.SkipSpace(body, i)
		end := jsonwalk.SkipValue(body, start)
		i = jsonwalk.SkipSpace(body, end)
		if key == "include_usage" {
			return nil // the client's choice, true or false, stands
		}
	}
	return &edit{start: soStart + 1, end: soStart + 1, text: []byte(`"include_usage":true,`)}
}

// bodyParts is the body to send: as it came, or with the model's value replaced by model (a JSON
// string, or the bare name in a form) and the usage edit when hide is set, as slices of the one
// buffer (no copy of the body).
func bodyParts(body []byte, rb requestBody, model []byte, hide bool) [][]byte {
	if body == nil {
		return nil // let go of (relay)
	}
	edits := make([]edit, 0, 2)
	if hide && rb.usageEdit != nil {
		edits = append(edits, *rb.usageEdit)
	}
	if model != nil {
		e := edit{start: rb.modelStart, end: rb.modelEnd, text: model}
		if len(edits) > 0 && edits[0].start > e.start {
			edits = append([]edit{e}, edits...)
		} else {
			edits = append(edits, e)
		}
	}
	parts := make([][]byte, 0, 2*len(edits)+1)
	at := 0
	for _, e := range edits {
		parts = append(parts, body[at:e.start], e.text)
		at = e.end
	}
	return append(parts, body[at:])
}

// withModel is body with the model's value replaced by quoted, as one slice (tests).
func withModel(body []byte, rb requestBody, quoted []byte) []byte {
	return bytes.Join(bodyParts(body, rb, quoted, false), nil)
}

// partsReader reads parts in order, and lets go of each part once it has been read: after a
// request body was sent, the reader the transport still holds does not keep it in memory.
type partsReader struct{ parts [][]byte }

func (r *partsReader) Read(p []byte) (int, error) {
	for len(r.parts) > 0 && len(r.parts[0]) == 0 {
		r.parts[0] = nil
		r.parts = r.parts[1:]
	}
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	r.parts[0] = r.parts[0][n:]
	return n, nil
}

func (r *partsReader) Close() error {
	r.parts = nil
	return nil
}
