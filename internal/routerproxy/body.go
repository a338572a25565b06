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
	"net/http"
)

// requestBody is what the proxy needs from a request body: the model, where its value sits (to
// rewrite it without re-encoding the rest), and whether the client asked for a stream.
type requestBody struct {
	model      string
	modelStart int
	modelEnd   int
	stream     bool
}

// scanBody reads the top level of a JSON object body.
//
// Note: it keeps the body's bytes as they are (field order, numbers, unknown fields) and only
// finds the offsets of "model", so a rewrite changes that value and nothing else. A duplicated
// "model" is refused: parsers disagree on which one wins, and the proxy must route by the one the
// backend reads.
func scanBody(body []byte) (requestBody, *apiError) {
	var rb requestBody
	malformed := func(err error) (requestBody, *apiError) {
		return rb, invalidRequest(http.StatusBadRequest, "invalid_json", "", "We could not parse the JSON body of your request: "+err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return malformed(errors.New("the body must be a JSON object"))
	}
	seenModel := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed(err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return malformed(err)
		}
		switch key {
		case "model":
			if seenModel {
				return rb, invalidRequest(http.StatusBadRequest, "invalid_value", "model", "The request sets model more than once.")
			}
			seenModel = true
			if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &rb.model) != nil {
				return rb, invalidRequest(http.StatusBadRequest, "invalid_type", "model", "model must be a string.")
			}
			rb.modelEnd = int(dec.InputOffset())
			rb.modelStart = rb.modelEnd - len(raw)
		case "stream":
			rb.stream = string(raw) == "true"
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return malformed(errors.New("data after the JSON object"))
	}
	if !seenModel || rb.model == "" {
		return rb, invalidRequest(http.StatusBadRequest, "missing_required_parameter", "model", "You must provide a model parameter.")
	}
	return rb, nil
}

// withModel is body with the model's value replaced by quoted (a JSON string).
func withModel(body []byte, rb requestBody, quoted []byte) []byte {
	out := make([]byte, 0, len(body)-(rb.modelEnd-rb.modelStart)+len(quoted))
	out = append(out, body[:rb.modelStart]...)
	out = append(out, quoted...)
	return append(out, body[rb.modelEnd:]...)
}
