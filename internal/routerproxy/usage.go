/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package routerproxy

import (
	"bytes"
	"encoding/json"
	"time"
)

// usage is what a response says it cost, in tokens.
type usage struct {
	input, output int64
	ok            bool
}

// meter reads a response's token usage, and a stream's first token, out of its bytes as they
// pass to the client.
//
// Note: nothing of the response is held but the usage object itself (bounded by maxUsageObject)
// and, only when it hides the usage-only chunk of a stream, the one server-sent event being
// received: a long answer is never buffered to find its usage at the end. The key is found by
// its bytes, `"usage"` then a colon and an object: inside a JSON string a quote is escaped, so
// those bytes can only be a key or a string value, and a value is not followed by a colon. The
// last usage object wins (a Responses stream repeats the response, with usage null until the
// end). Chat and completions name the counts prompt_tokens and completion_tokens, Responses
// input_tokens and output_tokens.
type meter struct {
	stream bool
	// hide keeps the usage-only chunk of a chat or completions stream from the client: the proxy
	// asked for it, the client did not.
	hide bool
	// blind passes the answer without reading it: it is compressed (an upstream that compressed
	// although asked for identity), and its bytes say nothing readable.
	blind bool
	event []byte // the incomplete server-sent event when hiding

	key     int    // bytes of `"usage"` matched, then keyColon / keyBrace
	obj     []byte // the usage object being captured
	depth   int
	inStr   bool
	escaped bool
	usage   usage

	firstToken time.Time
	// chunks counts the content values with text of a stream: the output-token estimate of an
	// answer that reports no usage.
	chunks  int64
	tokenAt [len(contentKeys)]int // bytes of each content key matched
	tokenAs tokenStep
}

// tokenStep is how far a content value is matched once its key is: the colon, then the opening
// quote, then its first character (a quote again means an empty string).
type tokenStep int

const (
	tokenKey tokenStep = iota
	tokenColon
	tokenQuote
	tokenFirst
)

const (
	usageKey       = `"usage"`
	keyColon       = len(usageKey) + 1 // the key matched, waiting for ':'
	keyBrace       = len(usageKey) + 2 // the colon matched, waiting for '{'
	keyObject      = len(usageKey) + 3 // inside the object
	maxUsageObject = 4 << 10
	// maxEvent bounds the event a hiding meter holds; a larger one passes unexamined.
	maxEvent = 1 << 20
)

// contentKeys hold a stream's content: chat (content, reasoning_content, reasoning, and the
// arguments of a tool call), completions (text), Responses (delta of the output_text and other
// delta events). A key, a colon and a non-empty string, whitespace allowed between them, is a
// token; the first is the first token.
var contentKeys = [...]string{`"content"`, `"text"`, `"delta"`, `"reasoning_content"`, `"reasoning"`, `"arguments"`}

// write passes p to emit (holding back the hidden chunk and the incomplete event when hiding)
// and reads it.
func (m *meter) write(p []byte, emit func([]byte) error) error {
	if m.blind {
		return emit(p)
	}
	if !m.hide {
		err := emit(p)
		m.scan(p)
		return err
	}
	m.event = append(m.event, p...)
	out, at := 0, 0
	for {
		end := eventEnd(m.event[at:])
		if end < 0 {
			break
		}
		ev := m.event[at : at+end]
		m.scan(ev)
		if usageOnly(ev) {
			if out < at {
				if err := emit(m.event[out:at]); err != nil {
					return err
				}
			}
			out = at + end
		}
		at += end
	}
	if out < at {
		if err := emit(m.event[out:at]); err != nil {
			return err
		}
	}
	rest := copy(m.event, m.event[at:])
	m.event = m.event[:rest]
	if len(m.event) > maxEvent {
		return m.flush(emit)
	}
	return nil
}

// flush passes what the meter holds (the end of the stream).
func (m *meter) flush(emit func([]byte) error) error {
	if len(m.event) == 0 {
		return nil
	}
	m.scan(m.event)
	err := emit(m.event)
	m.event = m.event[:0]
	return err
}

// eventEnd is the length of the first complete server-sent event of b (with its blank line), -1
// when b holds none yet.
func eventEnd(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 || i+j+1 >= len(b) {
			return -1
		}
		i += j
		switch {
		case b[i+1] == '\n':
			return i + 2
		case b[i+1] == '\r' && i+2 < len(b) && b[i+2] == '\n':
			return i + 3
		}
	}
	return -1
}

// usageOnly says ev is the chunk include_usage adds: no choices, a usage object.
func usageOnly(ev []byte) bool {
	return (bytes.Contains(ev, []byte(`"choices":[]`)) || bytes.Contains(ev, []byte(`"choices": []`))) &&
		(bytes.Contains(ev, []byte(`"usage":{`)) || bytes.Contains(ev, []byte(`"usage": {`)))
}

// scan reads p for the usage object and, in a stream, the first token.
//
// Note: every key it looks for starts with a quote, so while no match is under way it jumps to
// the next quote (bytes.IndexByte) instead of stepping through the text byte by byte.
func (m *meter) scan(p []byte) {
	for i := 0; i < len(p); i++ {
		if m.idle() {
			j := bytes.IndexByte(p[i:], '"')
			if j < 0 {
				return
			}
			i += j
			if len(p)-i >= longestKey && !m.startsKey(p[i:]) {
				continue // no key starts at this quote: the next quote may start one
			}
		}
		c := p[i]
		m.scanUsage(c)
		if m.stream {
			m.scanToken(c)
		}
	}
}

// longestKey is the longest key the meter looks for.
const longestKey = len(`"reasoning_content"`)

// startsKey says q starts with a key the meter looks for. It lets scan skip, in one comparison
// per key, the quotes that start none (most of them) instead of matching them byte by byte.
func (m *meter) startsKey(q []byte) bool {
	if bytes.HasPrefix(q, []byte(usageKey)) {
		return true
	}
	if m.stream {
		for _, k := range contentKeys {
			if bytes.HasPrefix(q, []byte(k)) {
				return true
			}
		}
	}
	return false
}

// idle says no key is partly matched: only a quote can start one.
func (m *meter) idle() bool {
	if m.key != 0 {
		return false
	}
	if m.stream {
		if m.tokenAs != tokenKey {
			return false
		}
		for _, n := range m.tokenAt {
			if n != 0 {
				return false
			}
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (m *meter) scanUsage(c byte) {
	switch {
	case m.key < len(usageKey):
		switch {
		case c == usageKey[m.key]:
			m.key++
		case c == '"':
			m.key = 1
		default:
			m.key = 0
		}
		if m.key == len(usageKey) {
			m.key = keyColon
		}
	case m.key == keyColon || m.key == keyBrace:
		switch {
		case isSpace(c):
		case c == ':' && m.key == keyColon:
			m.key = keyBrace
		case c == '{' && m.key == keyBrace:
			m.key, m.obj, m.depth, m.inStr, m.escaped = keyObject, append(m.obj[:0], c), 1, false, false
		default:
			m.key = 0
		}
	default: // keyObject
		m.obj = append(m.obj, c)
		switch {
		case m.escaped:
			m.escaped = false
		case m.inStr && c == '\\':
			m.escaped = true
		case c == '"':
			m.inStr = !m.inStr
		case !m.inStr && c == '{':
			m.depth++
		case !m.inStr && c == '}':
			m.depth--
		}
		if m.depth == 0 {
			m.key = 0
			if u, ok := parseUsage(m.obj); ok {
				m.usage = u
			}
		} else if len(m.obj) > maxUsageObject {
			m.key = 0
		}
	}
}

func (m *meter) scanToken(c byte) {
	switch m.tokenAs {
	case tokenColon, tokenQuote:
		want := byte(':')
		if m.tokenAs == tokenQuote {
			want = '"'
		}
		switch {
		case isSpace(c):
			return
		case c == want:
			m.tokenAs++
			return
		}
		m.tokenAs = tokenKey // not a string value: c may start another key
	case tokenFirst:
		m.tokenAs = tokenKey
		if c != '"' {
			m.chunks++
			if m.firstToken.IsZero() {
				m.firstToken = time.Now()
			}
		}
		return
	}
	for i, k := range contentKeys {
		n := m.tokenAt[i]
		switch {
		case c == k[n]:
			n++
		case c == '"':
			n = 1
		default:
			n = 0
		}
		if n == len(k) {
			m.tokenAt = [len(contentKeys)]int{}
			m.tokenAs = tokenColon
			return
		}
		m.tokenAt[i] = n
	}
}

// parseUsage reads a usage object.
func parseUsage(obj []byte) (usage, bool) {
	var u struct {
		PromptTokens     *int64 `json:"prompt_tokens"`
		CompletionTokens *int64 `json:"completion_tokens"`
		InputTokens      *int64 `json:"input_tokens"`
		OutputTokens     *int64 `json:"output_tokens"`
	}
	if json.Unmarshal(obj, &u) != nil {
		return usage{}, false
	}
	var out usage
	for _, v := range []*int64{u.PromptTokens, u.InputTokens} {
		if v != nil && *v >= 0 {
			out.input, out.ok = *v, true
		}
	}
	for _, v := range []*int64{u.CompletionTokens, u.OutputTokens} {
		if v != nil && *v >= 0 {
			out.output, out.ok = *v, true
		}
	}
	return out, out.ok
}
