package main

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// neo4jOutage gives a test a Neo4j it may take away and give back: the URI memgate
// connects to, and down and up. make test cuts the network path to the shared test
// Neo4j (cutLink): down closes every connection and the listening port, so memgate
// meets what it meets when Neo4j is stopped (refused connections, broken sessions);
// the database keeps running for the other tests. make reliability stops and starts
// the private Neo4j itself (scripts/neo4j-local), a JVM's shutdown and cold start
// included.
func neo4jOutage(t *testing.T) (uri string, down, up func()) {
	t.Helper()
	if reliability {
		uri, neo4jLocal := neo4jtest.Private(t)
		return uri, func() { neo4jLocal("stop") }, func() { neo4jLocal("start") }
	}
	l := cutLink(t, neo4jtest.URI(t))
	return l.uri, l.cut, l.restore
}

// link forwards TCP connections from its own port to a Neo4j's Bolt port, and can be
// cut and restored on the same port.
type link struct {
	t      *testing.T
	uri    string // bolt://127.0.0.1:port: the link's end memgate dials
	addr   string // its listening address
	target string // the Neo4j's host:port

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func cutLink(t *testing.T, neo4jURI string) *link {
	t.Helper()
	u, err := url.Parse(neo4jURI)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &link{t: t, addr: ln.Addr().String(), target: u.Host, conns: map[net.Conn]bool{}}
	l.uri = "bolt://" + l.addr
	l.serve(ln)
	t.Cleanup(l.cut)
	return l
}

// serve accepts on ln until it is closed, and joins each connection to a new one to
// the target.
func (l *link) serve(ln net.Listener) {
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return // closed by cut
			}
			out, err := net.Dial("tcp", l.target)
			if err != nil {
				in.Close()
				continue
			}
			if !l.track(in, out) {
				continue
			}
			go l.pipe(in, out)
			go l.pipe(out, in)
		}
	}()
}

// track remembers a joined pair, or closes it when the link was cut meanwhile.
func (l *link) track(in, out net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln == nil {
		in.Close()
		out.Close()
		return false
	}
	l.conns[in], l.conns[out] = true, true
	return true
}

func (l *link) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	l.mu.Lock()
	delete(l.conns, dst)
	delete(l.conns, src)
	l.mu.Unlock()
}

// cut closes the listening port and every connection through it.
func (l *link) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
	for c := range l.conns {
		c.Close()
		delete(l.conns, c)
	}
}

// restore listens on the link's port again (retrying while the kernel still holds it).
func (l *link) restore() {
	l.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ln, err := net.Listen("tcp", l.addr)
		if err == nil {
			l.serve(ln)
			return
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			l.t.Fatalf("listening on %s again: %v", l.addr, err)
		}
	}
}
