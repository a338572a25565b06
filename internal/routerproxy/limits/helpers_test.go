/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package limits

import (
	"net"
	"testing"
)

// hangingListener accepts connections and never answers: a Redis that hangs.
func hangingListener(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// settleNow settles t at once: a Redis store's own settlements wait for its worker.
func settleNow(s store, t *Ticket, used int64) error {
	if r, ok := s.(*redisStore); ok {
		return r.send(nil, []settlement{{t: t, used: used}}, nil)
	}
	return s.settle(t, used)
}
