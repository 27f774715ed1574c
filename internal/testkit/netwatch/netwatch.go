// Package netwatch is a loopback TCP listener that counts the connections
// made to it.
//
// It is a TCP listener on 127.0.0.1 that counts the
// connections made to it, for tests that prove a program reached out to no
// address the test did not allow: give the program the listener's address
// in a place an attacker controls (a schema reference, a URL in a chart)
// and check Count is 0 afterwards.
package netwatch

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Listener counts connections to a loopback address; each one is closed at
// once, having read nothing.
type Listener struct {
	ln    net.Listener
	count atomic.Int64
	wg    sync.WaitGroup
}

// Listen starts a Listener on 127.0.0.1 (closed when the test ends).
func Listen(t testing.TB) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("netwatch: %v", err)
	}
	l := &Listener{ln: ln}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.count.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		l.wg.Wait()
	})
	return l
}

// Addr is HOST:PORT of the listener.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// URL is an http URL on the listener with path p ("/x.json").
func (l *Listener) URL(p string) string { return "http://" + l.Addr() + p }

// Count is the number of connections accepted so far.
func (l *Listener) Count() int64 { return l.count.Load() }
