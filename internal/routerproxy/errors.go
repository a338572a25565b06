/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// apiError is an error the proxy answers itself, in the shape OpenAI clients parse:
// {"error":{"message","type","param","code"}}.
type apiError struct {
	status  int
	message string
	typ     string
	code    string
	param   string
}

func (e *apiError) write(w http.ResponseWriter) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	}
	b := body{Message: e.message, Type: e.typ, Code: e.code}
	if e.param != "" {
		b.Param = &e.param
	}
	out, _ := json.Marshal(map[string]body{"error": b})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(e.status)
	_, _ = w.Write(out)
}

func invalidRequest(status int, code, param, msg string) *apiError {
	return &apiError{status: status, message: msg, typ: "invalid_request_error", code: code, param: param}
}

func serverError(status int, code, msg string) *apiError {
	return &apiError{status: status, message: msg, typ: "server_error", code: code}
}
