/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package prefix

// The prompt text a request's blocks are cut from. It is what a model server turns into tokens,
// in its order, with a marker where a message starts so that the same words said by another
// role are another prompt:
//
//	message:  0x1E role 0x1F, then the content: a string's text, or each part's "text" (a part
//	          without text, such as an image, adds 0x1D type 0x1D instead: its bytes are not hashed)
//	chat:     the messages in order
//	completion: the prompt string (a token array or a batch of prompts has no blocks)
//	responses: 0x1E "instructions" 0x1F and its text when set, then the input: a string is one
//	          message of role "user"; an array is its items as messages (an item without a role,
//	          such as a function call output, uses its type as the role)
//
// Only the text counts, never the JSON's bytes: key order, whitespace and escapes (\u00e9 or é)
// do not change the blocks.
const (
	markMessage = 0x1E
	markRole    = 0x1F
	markPart    = 0x1D
)

// Kinds of prompt, part of the first block's hash.
const (
	KindChat       = "chat"
	KindCompletion = "completion"
	KindResponses  = "responses"
)

// Chat is the blocks of a chat completions request: messages is the raw JSON value of its
// "messages" member.
func (h *Hasher) Chat(model string, messages []byte) []uint64 {
	c := h.start(KindChat, model, len(messages))
	elements(messages, func(m []byte) bool {
		c.message(m, "")
		return !c.full()
	})
	return c.result()
}

// Completion is the blocks of a completions request whose "prompt" is a string.
func (h *Hasher) Completion(model string, prompt []byte) []uint64 {
	if !isString(prompt) {
		return nil
	}
	c := h.start(KindCompletion, model, len(prompt))
	c.text(prompt)
	return c.result()
}

// Responses is the blocks of a Responses API request from its "instructions" and "input"
// members (either may be nil).
func (h *Hasher) Responses(model string, instructions, input []byte) []uint64 {
	c := h.start(KindResponses, model, len(instructions)+len(input))
	if isString(instructions) {
		c.mark("instructions")
		c.text(instructions)
	}
	switch {
	case isString(input):
		c.mark("user")
		c.text(input)
	case len(input) > 0 && input[0] == '[':
		elements(input, func(item []byte) bool {
			c.message(item, "type")
			return !c.full()
		})
	}
	return c.result()
}

// message writes one message object: its role marker, then its content. An object without a
// string role takes the string in its member named fallback as the role, if any.
func (c *chain) message(m []byte, fallback string) {
	if len(m) == 0 || m[0] != '{' {
		return
	}
	var role, content, alt []byte
	members(m, func(key, v []byte) {
		switch {
		case keyIs(key, "role"):
			role = v
		case keyIs(key, "content"):
			content = v
		case fallback != "" && keyIs(key, fallback):
			alt = v
		}
	})
	if !isString(role) {
		role = alt
	}
	c.write([]byte{markMessage})
	c.text(role)
	c.write([]byte{markRole})
	switch {
	case isString(content):
		c.text(content)
	case len(content) > 0 && content[0] == '[':
		elements(content, func(part []byte) bool {
			c.part(part)
			return !c.full()
		})
	}
}

// part writes one content part: its text, or a marker with its type.
func (c *chain) part(p []byte) {
	if isString(p) { // some clients send bare strings as parts
		c.text(p)
		return
	}
	if text := field(p, "text"); isString(text) {
		c.text(text)
		return
	}
	c.write([]byte{markPart})
	if t := field(p, "type"); isString(t) {
		c.text(t)
	}
	c.write([]byte{markPart})
}

// mark writes the marker of a message of role.
func (c *chain) mark(role string) {
	c.write([]byte{markMessage})
	c.writeString(role)
	c.write([]byte{markRole})
}

// text writes the decoded text of the JSON string quoted (nothing when it is not a string).
func (c *chain) text(quoted []byte) {
	decodeString(quoted, func(p []byte) bool {
		c.write(p)
		return !c.full()
	})
}
