/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package jsonwalk

import "testing"

// SkipValue ends each value where encoding/json would: quotes after an even run of backslashes
// end a string, brackets inside strings do not count, and a scalar ends at its delimiter.
func TestSkipValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // the value SkipValue steps over
	}{
		{`"plain",1`, `"plain"`},
		{`"a \"quoted\" word"]`, `"a \"quoted\" word"`},
		{`"ends in a backslash \\",2`, `"ends in a backslash \\"`},
		{`"three \\\" backslashes"}`, `"three \\\" backslashes"`},
		{`{"k":"}{][","n":[1,{"x":"]"}]},3`, `{"k":"}{][","n":[1,{"x":"]"}]}`},
		{`[[],{},""] `, `[[],{},""]`},
		{`-12.5e3,`, `-12.5e3`},
		{`true}`, `true`},
		{`null`, `null`},
	} {
		if got := c.in[:SkipValue([]byte(c.in), 0)]; got != c.want {
			t.Errorf("SkipValue(%s) stepped over %s, want %s", c.in, got, c.want)
		}
	}
	if n := SkipValue([]byte(`"x"`), 3); n != 3 {
		t.Errorf("SkipValue past the end = %d, want 3", n)
	}
	if n := SkipValue([]byte(`{"open`), 0); n != 6 {
		t.Errorf("SkipValue of a truncated object = %d, want its length 6", n)
	}
	if n := SkipSpace([]byte(" \t\r\n x"), 0); n != 5 {
		t.Errorf("SkipSpace = %d, want 5", n)
	}
}
