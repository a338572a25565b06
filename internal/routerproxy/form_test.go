/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// goForm is what a Go backend reads of a form (mime/multipart's ReadForm, as ParseMultipartForm
// calls it), and whether a part is quoted-printable (which the proxy refuses).
func goForm(body []byte, boundary string) (form *multipart.Form, qp bool, err error) {
	raw := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := raw.NextRawPart()
		if err != nil {
			break
		}
		qp = qp || strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable")
	}
	form, err = multipart.NewReader(bytes.NewReader(body), boundary).ReadForm(1 << 20)
	if err == nil {
		_ = form.RemoveAll()
	}
	return form, qp, err
}

// goFormModel is the model a Go backend reads (FormValue), or its error.
func goFormModel(body []byte, boundary string) (string, error) {
	r := httptest.NewRequest(http.MethodPost, "/v1/audio/transcriptions", bytes.NewReader(body))
	r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		return "", err
	}
	defer func() { _ = r.MultipartForm.RemoveAll() }()
	return r.FormValue("model"), nil
}

func crlf(s string) []byte { return []byte(strings.ReplaceAll(s, "\n", "\r\n")) }

// Proves R31: the proxy routes on the model a mime/multipart backend reads, or refuses the body;
// it never routes on another one (the bodies of issue 37, item 8).
func TestScanFormAgreesWithMimeMultipart(t *testing.T) {
	const model = "Content-Disposition: form-data; name=\"model\"\n\n"
	for _, tc := range []struct {
		name string
		body []byte
		// want is the model routed on; empty: a 400 (invalid_form, or invalid_value for a
		// duplicated model).
		want string
	}{
		{"a plain form", crlf("--b\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\n\nRIFF\n--b\n" + model + "whisper-1\n--b--\n"), "whisper-1"},
		{"a part without headers does not swallow the next part's headers",
			crlf("--b\n\njunk\n--b\n" + model + "expensive\n--b\n" + model + "cheap\n--b--\n"), ""},
		{"a delimiter mid-line in the preamble is text",
			crlf("preamble --b\n" + model + "cheap\n--b\n\njunk\n--b\n" + model + "expensive\n--b--\n"), "expensive"},
		{"a delimiter followed by more boundary characters is content",
			crlf("--b\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\n\nRIFF\n--bc\n" + model + "cheap\n--b\n\njunk\n--b\n" + model + "expensive\n--b--\n"), "expensive"},
		{"a delimiter line with text after it is refused as mime/multipart refuses it",
			crlf("--b\n" + model + "m\n--b\tjunk\n\nx\n--b--\n"), ""},
		{"LF line ends, as mime/multipart accepts them", []byte("--b\n" + model + "lf-model\n--b--\n"), "lf-model"},
		{"quoted-printable is refused (a backend would decode it)",
			crlf("--b\nContent-Disposition: form-data; name=\"model\"\nContent-Transfer-Encoding: quoted-printable\n\nm=3D1\n--b--\n"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goModel, goErr := goFormModel(tc.body, "b")
			rb, e := scanForm(tc.body, "multipart/form-data; boundary=b")
			switch {
			case e != nil && tc.want == "":
				if e.status != 400 {
					t.Fatalf("status %d", e.status)
				}
			case e != nil:
				t.Fatalf("refused (%s: %s); a Go backend reads %q (%v)", e.code, e.message, goModel, goErr)
			case tc.want == "":
				t.Fatalf("routed on %q; a Go backend reads %q (%v)", rb.model, goModel, goErr)
			case rb.model != tc.want || goErr != nil || goModel != tc.want:
				t.Fatalf("routed on %q, want %q; a Go backend reads %q (%v)", rb.model, tc.want, goModel, goErr)
			}
		})
	}
}
