/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"mime"
	"net/http"
	"net/textproto"
)

// scanForm finds the model field of a multipart/form-data body (audio transcriptions and
// translations), the way scanBody finds a JSON body's model.
//
// Note: the body is walked by offsets and never re-encoded: the file part reaches the backend
// byte for byte, and a model rewrite replaces only the text of the model field (a form part has
// no length of its own, so its text may change size). mime/multipart is not used because it
// reports no offsets; it is what the backend will parse, so the walk keeps to RFC 7578: parts
// between "--boundary" delimiter lines, each with headers, a blank line, then its content up to
// CRLF "--boundary".
func scanForm(body []byte, contentType string) (requestBody, *apiError) {
	var rb requestBody
	rb.form = true
	bad := func(msg string) (requestBody, *apiError) {
		return rb, invalidRequest(http.StatusBadRequest, "invalid_form", "", "We could not parse the multipart/form-data body of your request: "+msg)
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return bad("the Content-Type must be multipart/form-data with a boundary")
	}
	delim := []byte("--" + params["boundary"])
	i := bytes.Index(body, delim)
	if i < 0 {
		return bad("no part")
	}
	seen := false
	for {
		i += len(delim)
		if bytes.HasPrefix(body[i:], []byte("--")) {
			break // the closing delimiter
		}
		eol := bytes.Index(body[i:], []byte("\r\n"))
		if eol < 0 {
			return bad("a delimiter line without its end")
		}
		i += eol + 2
		hdrEnd := bytes.Index(body[i:], []byte("\r\n\r\n"))
		if hdrEnd < 0 {
			if !bytes.HasPrefix(body[i:], []byte("\r\n")) {
				return bad("a part without the blank line after its headers")
			}
			hdrEnd = -2 // no headers
		}
		var name, filename string
		if hdrEnd >= 0 {
			h, err := textproto.NewReader(newLineReader(body[i : i+hdrEnd+4])).ReadMIMEHeader()
			if err != nil {
				return bad("a part's headers: " + err.Error())
			}
			if _, p, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil {
				name, filename = p["name"], p["filename"]
			}
		}
		start := i + hdrEnd + 4
		next := bytes.Index(body[start:], append([]byte("\r\n"), delim...))
		if next < 0 {
			return bad("a part without the delimiter after it")
		}
		end := start + next
		if name == "model" && filename == "" {
			if seen {
				return rb, invalidRequest(http.StatusBadRequest, "invalid_value", "model", "The request sets model more than once.")
			}
			seen = true
			rb.model, rb.modelStart, rb.modelEnd = string(body[start:end]), start, end
		}
		if name == "stream" && filename == "" {
			rb.stream = string(body[start:end]) == "true"
		}
		i = end + 2
	}
	if !seen || rb.model == "" {
		return rb, invalidRequest(http.StatusBadRequest, "missing_required_parameter", "model", "You must provide a model parameter.")
	}
	return rb, nil
}
