/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// Limits of a form beyond mime/multipart's own. A Go backend's ParseMultipartForm refuses more
// than 1000 parts (its multipartmaxparts); the header limit bounds the work of a body of many
// tiny headers (mime/multipart allows 10000 per part).
const (
	maxFormParts   = 1000
	maxFormHeaders = 10000
	// maxPreamble bounds the text before the first delimiter, which clients never send (Go's
	// multipart.Writer, curl, requests, the OpenAI SDKs) and which costs a read per line.
	maxPreamble = 64 << 10
)

// scanForm finds the model field of a multipart/form-data body (audio transcriptions and
// translations), the way scanBody finds a JSON body's model.
//
// Note: the body is parsed by mime/multipart itself, so the proxy reads the parts, and the model,
// a Go backend reads, and refuses what it refuses (an RFC parser of one's own disagreed with it:
// issue 37). mime/multipart reports no offsets, and the body must reach the backend byte for byte
// with only the model's text replaced, so a formLocator walks the same bytes by mime/multipart's
// rules for what it does not report (where each part's content starts), mime/multipart says
// where it ends (its length), and every byte it reads is compared with the located span: a
// part that is not where the walk says refuses the body rather than route on a guess.
// Quoted-printable parts, which mime/multipart decodes (so their text is not their bytes), are
// refused: RFC 7578 section 4.7 deprecates Content-Transfer-Encoding in forms.
func scanForm(body []byte, contentType string) (requestBody, *apiError) {
	var rb requestBody
	rb.form = true
	bad := func(msg string) (requestBody, *apiError) {
		return rb, invalidRequest(http.StatusBadRequest, "invalid_form", "", "We could not parse the multipart/form-data body of your request: "+msg)
	}
	mt, params, err := mime.ParseMediaType(contentType)
	boundary := params["boundary"]
	if err != nil || mt != "multipart/form-data" || !validBoundary(boundary) {
		return bad("the Content-Type must be multipart/form-data with a boundary of 1 to 70 characters (RFC 2046)")
	}
	loc := formLocator{body: body, dash: []byte("--" + boundary), nl: []byte("\r\n")}
	if !loc.delimiterWithin(maxPreamble) {
		return bad("no delimiter line in its first 64 KiB (a preamble that long is refused)")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	buf := make([]byte, 4096) // mime/multipart returns at most its 4 KiB buffer per read
	seen, seenStream, headers := false, false, 0
	for n := 0; ; n++ {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bad(err.Error())
		}
		if n == maxFormParts {
			return bad("more than 1000 parts")
		}
		for _, v := range part.Header {
			headers += len(v)
		}
		if headers > maxFormHeaders {
			return bad("more than 10000 part headers")
		}
		if strings.EqualFold(part.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			return bad("a part with Content-Transfer-Encoding: quoted-printable (RFC 7578 section 4.7)")
		}
		start, ok := loc.next()
		if !ok {
			return bad("a part the proxy could not locate")
		}
		size, err := sameBytes(part, body[start:], buf)
		if errors.Is(err, errElsewhere) {
			return bad("a part the proxy could not locate")
		}
		if err != nil {
			return bad(err.Error())
		}
		end := start + size
		loc.pos = end
		name, file := part.FormName(), part.FileName()
		switch {
		case name == "model" && (seen || file != ""):
			return rb, invalidRequest(http.StatusBadRequest, "invalid_value", "model", "The request sets model more than once, or as a file.")
		case name == "model":
			seen = true
			rb.model, rb.modelStart, rb.modelEnd = string(body[start:end]), start, end
		case name == "stream" && file == "" && !seenStream: // the first, as FormValue reads it
			seenStream = true
			rb.stream = string(body[start:end]) == "true"
		}
	}
	if !seen || rb.model == "" {
		return rb, invalidRequest(http.StatusBadRequest, "missing_required_parameter", "model", "You must provide a model parameter.")
	}
	return rb, nil
}

// validBoundary: RFC 2046's bchars, 1 to 70 of them, not ending in a space. Neither CR nor LF
// can then appear in a delimiter, so no two delimiters overlap.
func validBoundary(b string) bool {
	if len(b) == 0 || len(b) > 70 || b[len(b)-1] == ' ' {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte("'()+_,-./:=? ", c) >= 0) {
			return false
		}
	}
	return true
}

// errElsewhere: what mime/multipart read is not at the offsets the walk found.
var errElsewhere = errors.New("part content elsewhere")

// sameBytes reads part to its end, checking that it is the start of want; it returns its length.
func sameBytes(part io.Reader, want, buf []byte) (int, error) {
	n := 0
	for {
		m, err := part.Read(buf)
		if m > 0 {
			if n+m > len(want) || !bytes.Equal(buf[:m], want[n:n+m]) {
				return n, errElsewhere
			}
			n += m
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// formLocator walks a form's bytes the way mime/multipart's Reader.NextPart does between two
// parts' contents: from pos (the end of the previous content, or the body's start), lines up to
// a delimiter line (the preamble's, skipped; between parts only the line end before it), then
// the part's header lines up to the empty one. It mirrors multipart.go's nextPart,
// isBoundaryDelimiterLine and isFinalBoundary, and net/textproto's end of a header block.
type formLocator struct {
	body  []byte
	pos   int
	dash  []byte // "--" + boundary
	nl    []byte // "\r\n", or "\n" once the first delimiter line ends so
	parts int
}

// next is the offset of the next part's content, false where mime/multipart found no part.
func (l *formLocator) next() (int, bool) {
	expectNewPart := false
	for {
		line, ok := l.line()
		if !ok {
			return 0, false
		}
		if l.delimiterLine(line) {
			l.parts++
			break
		}
		rest, final := bytes.CutPrefix(line, append(l.dash, '-', '-'))
		if final && (len(skipLWSP(rest)) == 0 || bytes.Equal(skipLWSP(rest), l.nl)) {
			return 0, false
		}
		switch {
		case expectNewPart:
			return 0, false
		case l.parts == 0:
			continue
		case bytes.Equal(line, l.nl):
			expectNewPart = true
			continue
		}
		return 0, false
	}
	for {
		line, ok := l.line()
		if !ok {
			return 0, false
		}
		if bytes.Equal(line, []byte("\r\n")) || bytes.Equal(line, []byte("\n")) {
			return l.pos, true
		}
	}
}

// delimiterWithin says a line starting in the first n bytes is a delimiter (of either line end)
// or the closing one.
func (l *formLocator) delimiterWithin(n int) bool {
	for i := 0; i < len(l.body) && i < n; {
		end := bytes.IndexByte(l.body[i:], '\n')
		if end < 0 {
			end = len(l.body) - i - 1
		}
		if rest, ok := bytes.CutPrefix(l.body[i:i+end+1], l.dash); ok {
			rest = skipLWSP(bytes.TrimPrefix(rest, []byte("--")))
			if len(rest) == 0 || string(rest) == "\n" || string(rest) == "\r\n" {
				return true
			}
		}
		i += end + 1
	}
	return false
}

// line is the line at pos with its "\n", and moves past it.
func (l *formLocator) line() ([]byte, bool) {
	i := bytes.IndexByte(l.body[l.pos:], '\n')
	if i < 0 {
		return nil, false
	}
	line := l.body[l.pos : l.pos+i+1]
	l.pos += i + 1
	return line, true
}

func (l *formLocator) delimiterLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, l.dash)
	if !ok {
		return false
	}
	rest = skipLWSP(rest)
	if l.parts == 0 && len(rest) == 1 && rest[0] == '\n' {
		l.nl = l.nl[1:] // LF line ends, which mime/multipart accepts from the first delimiter on
	}
	return bytes.Equal(rest, l.nl)
}

func skipLWSP(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}
